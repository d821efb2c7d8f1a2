"""The Python package's benchmarks: ndconv.ndimage against scipy.ndimage (CPU, numpy) and
cupyx.scipy.ndimage (GPU, data on the device), with the machine's ceilings measured in the same
run (PCIe copy bandwidth, device copy bandwidth). Prints a table and writes JSON.

    python python/benchmarks/bench_python.py --cpu [--json out.json]
    python python/benchmarks/bench_python.py --gpu [--json out.json]

Not a test: timings go to docs/records/, never into assertions."""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np

import ndconv

MODE = os.environ.get("BENCH_MODE", "reflect")  # scipy's default
from ndconv import ndimage as nd


def best_wall(call, repeat=5, warmup=1):
    for _ in range(warmup):
        call()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return min(times)


# ---- CPU -----------------------------------------------------------------------------------------


def cpu_rows(shape, repeat):
    import scipy
    import scipy.ndimage as sn

    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    k7 = rng.random((7, 7, 7)).astype(np.float32)
    k7 /= k7.sum()
    cases = [
        ("gaussian_filter sigma 2", lambda m: m.gaussian_filter(x, 2.0, mode=MODE), 8.0),
        ("correlate 7^3", lambda m: m.correlate(x, k7, mode=MODE), 20.0),
        ("uniform_filter size 5", lambda m: m.uniform_filter(x, 5, mode=MODE), 4.0),
        ("median_filter size 3", lambda m: m.median_filter(x, 3, mode=MODE), 1.5),
    ]
    # The floor: one pass reading the input and writing the output (a copy).
    out = np.empty_like(x)
    copy_s = best_wall(lambda: np.copyto(out, x), repeat)
    rows = []
    for name, call, target in cases:
        ours = best_wall(lambda: call(nd), repeat)
        theirs = best_wall(lambda: call(sn), max(1, repeat // 2))
        rows.append(dict(case=f"{name}, {shape[0]}^3 float32", ndconv_s=ours, scipy_s=theirs,
                         speedup=theirs / ours, target=target, copy_floor_s=copy_s))
    return rows, dict(scipy=scipy.__version__, cpu_threads=os.cpu_count(),
                      machine=platform.processor() or platform.machine())


# ---- GPU -----------------------------------------------------------------------------------------


def gpu_rows(repeat):
    import cupy
    import cupyx.scipy.ndimage as cn

    flush = cupy.empty(512 * 2**20, dtype=cupy.uint8)  # > the H200's 50 MB L2
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()

    def device_time(call):
        call()
        cupy.cuda.get_current_stream().synchronize()
        times = []
        for _ in range(repeat):
            flush.fill(1)
            start.record()
            call()
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop) * 1e-3)
        return statistics.median(times)

    rng = np.random.default_rng(1)
    x512 = cupy.asarray(rng.standard_normal((512, 512, 512)).astype(np.float32))
    x256 = cupy.asarray(rng.standard_normal((256, 256, 256)).astype(np.float32))
    k7 = (rng.random((7, 7, 7)) / 171.5).astype(np.float32)
    k7_device = cupy.asarray(k7)
    cases = [
        ("gaussian_filter 512^3 sigma 2", lambda m: m.gaussian_filter(x512, 2.0), 8.0),
        ("correlate 256^3, 7^3 kernel", lambda m: m.correlate(
            x256, k7 if m is nd else k7_device), 10.0),
        ("uniform_filter 256^3 size 5", lambda m: m.uniform_filter(x256, 5), 4.0),
        ("median_filter 256^3 size 3", lambda m: m.median_filter(x256, 3), 2.0),
    ]
    rows = []
    for name, call, target in cases:
        ours = device_time(lambda: call(nd))
        theirs = device_time(lambda: call(cn))
        rows.append(dict(case=f"{name}, data on the device", ndconv_s=ours, cupyx_s=theirs,
                         speedup=theirs / ours, target=target))

    # Host overhead of one call on a small array: wall time of many calls in a row, less the
    # device time of the same calls (CUDA events around the batch).
    small = cupy.asarray(rng.standard_normal((32, 32, 32)).astype(np.float32))
    for label, module in (("ndconv", nd), ("cupyx", cn)):
        calls = 2000
        for _ in range(50):
            module.gaussian_filter(small, 1.0)
        cupy.cuda.get_current_stream().synchronize()
        start.record()
        t0 = time.perf_counter()
        for _ in range(calls):
            module.gaussian_filter(small, 1.0)
        wall_issue = time.perf_counter() - t0
        stop.record()
        stop.synchronize()
        wall = time.perf_counter() - t0
        device = cupy.cuda.get_elapsed_time(start, stop) * 1e-3
        rows.append(dict(case=f"host time per call, 32^3 gaussian_filter ({label})",
                         seconds_per_call=wall_issue / calls,
                         device_seconds_per_call=device / calls, wall_seconds_per_call=wall / calls,
                         target=20e-6 if label == "ndconv" else None))

    # numpy in, numpy out through the GPU, against the PCIe floor measured here: the input up and
    # the output down from pageable memory, as the call must copy them.
    host = rng.standard_normal((256, 256, 256)).astype(np.float32)
    back = np.empty_like(host)
    dev = cupy.empty(host.shape, cupy.float32)

    def pcie():
        dev.set(host)
        dev.get(out=back)
        cupy.cuda.get_current_stream().synchronize()

    floor = best_wall(pcie, repeat)
    whole = best_wall(lambda: nd.correlate(host, k7, device="cuda"), repeat)
    rows.append(dict(case="numpy 256^3 float32 through the GPU, 7^3 correlate", ndconv_s=whole,
                     pcie_floor_s=floor, ratio_to_floor=whole / floor, target=1.5))
    props = cupy.cuda.runtime.getDeviceProperties(0)
    return rows, dict(gpu=props["name"].decode(), cupy=cupy.__version__,
                      cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
                      driver=cupy.cuda.runtime.driverGetVersion())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--shape", type=int, default=160)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json")
    args = parser.parse_args()
    report = dict(ndconv=ndconv.__version__, numpy=np.__version__, python=platform.python_version(),
                  rows=[])
    if args.cpu:
        rows, facts = cpu_rows((args.shape,) * 3, args.repeat)
        report["rows"] += rows
        report["cpu"] = facts
    if args.gpu:
        rows, facts = gpu_rows(max(args.repeat, 10))
        report["rows"] += rows
        report["gpu"] = facts
    for r in report["rows"]:
        print(json.dumps(r))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
