# Where a CuPy gaussian_filter call's time goes: wall time of the call (synchronised) against the
# GPU time between events around it, for 256^3 and 272^3 blocks and three modes.
import time
import cupy as cp
import ndconv.ndimage as ndi

for n in (256, 272):
    x = cp.random.default_rng(1).random((n, n, n), dtype=cp.float32)
    out = cp.empty_like(x)
    for mode in ("reflect", "nearest", "constant"):
        for _ in range(2):
            ndi.gaussian_filter(x, 2.0, mode=mode, output=out)
        cp.cuda.Device().synchronize()
        walls, gpus = [], []
        for _ in range(5):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            t = time.perf_counter()
            a.record()
            ndi.gaussian_filter(x, 2.0, mode=mode, output=out)
            b.record()
            b.synchronize()
            walls.append(time.perf_counter() - t)
            gpus.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
        # and with a fresh output each time, as the dask tasks do
        t = time.perf_counter()
        for _ in range(5):
            ndi.gaussian_filter(x, 2.0, mode=mode)
        cp.cuda.Device().synchronize()
        fresh = (time.perf_counter() - t) / 5
        print(f"{n}^3 {mode:8s}: wall {min(walls)*1e3:.3f} ms, GPU {min(gpus)*1e3:.3f} ms, "
              f"new output each call {fresh*1e3:.3f} ms")
