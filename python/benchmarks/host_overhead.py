"""Where the host time of one small GPU call goes: the whole ndconv.ndimage call, the engine's
binding call alone (arguments prepared beforehand), the package's Python side alone (the binding
replaced by a no-op), and CuPy's own allocation of the output; cupyx.scipy.ndimage for comparison.
Each number is the wall time per call of 2000 calls in a row on a 32^3 float32 CuPy array,
synchronised at the end (the GPU keeps up, so this is host time). Prints JSON lines.

    python python/benchmarks/host_overhead.py
"""

import json
import time

import cupy
import cupyx.scipy.ndimage as cn
import numpy as np

from ndconv import _ndconv
from ndconv import ndimage as nd


def per_call(f, calls=2000):
    for _ in range(100):
        f()
    cupy.cuda.get_current_stream().synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        f()
    cupy.cuda.get_current_stream().synchronize()
    return (time.perf_counter() - t0) / calls


def main():
    x = cupy.asarray(np.random.default_rng(0).standard_normal((32, 32, 32)).astype(np.float32))
    out = cupy.empty_like(x)
    taps = np.asarray(_ndconv.gaussian_derivative_taps(1.0, 0, 4.0), np.float32)
    s = _ndconv.CallSettings()
    s.boundary = "reflect"
    s.device = "auto"
    s.want_report = False
    s.stream = cupy.cuda.get_current_stream().ptr
    rows = {
        "ndconv gaussian_filter, whole call": lambda: nd.gaussian_filter(x, 1.0),
        "ndconv gaussian_filter, output given": lambda: nd.gaussian_filter(x, 1.0, output=out),
        "engine binding alone (separable, device addresses)": lambda: _ndconv.correlate_separable_at(
            x.data.ptr, out.data.ptr, (32, 32, 32), [taps, taps, taps], s, 0),
        "engine binding alone, one axis": lambda: _ndconv.correlate_separable_at(
            x.data.ptr, out.data.ptr, (32, 32, 32), [[], [], taps], s, 0),
        "cupy.empty 32^3 float32": lambda: cupy.empty((32, 32, 32), cupy.float32),
        "cupyx gaussian_filter": lambda: cn.gaussian_filter(x, 1.0),
        "ndconv median_filter size 3": lambda: nd.median_filter(x, 3),
        "cupyx median_filter size 3": lambda: cn.median_filter(x, 3),
    }
    for name, f in rows.items():
        print(json.dumps({"case": name, "seconds_per_call": per_call(f)}))
    # The Python side alone: the binding replaced by a no-op.
    real = _ndconv.correlate_separable_at
    import ndconv._passes as passes

    class NoEngine:
        def __getattr__(self, name):
            return (lambda *a, **k: None) if name == "correlate_separable_at" else getattr(
                _ndconv, name)

    passes._ndconv = NoEngine()
    try:
        print(json.dumps({"case": "package Python side alone (binding a no-op)",
                          "seconds_per_call": per_call(lambda: nd.gaussian_filter(x, 1.0))}))
    finally:
        passes._ndconv = _ndconv
    assert _ndconv.correlate_separable_at is real


if __name__ == "__main__":
    main()
