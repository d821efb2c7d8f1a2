#!/usr/bin/env bash
# GPU run 5 (two H200s): one volume in slabs over both GPUs (Options::cuda_devices): the GPU suite
# with its new test, and numpy volumes through the package on one GPU and on two (whole calls,
# outputs compared bit for bit).
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT
t0=$(date +%s)
timeout 300 ./bin/ndconv_gpu_tests --gtest_brief=1 > $o/gpu_tests.txt 2>&1; echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED' $o/gpu_tests.txt | tail -6
python3 - <<'PY'
import time, numpy as np
from ndconv import ndimage as nd
rng = np.random.default_rng(0)
x = rng.standard_normal((512, 512, 512)).astype(np.float32)
k = (rng.random((11, 11, 11)) / 665).astype(np.float32)
def best(f, n=3):
    f(); ts = []
    for _ in range(n):
        t = time.perf_counter(); r = f(); ts.append(time.perf_counter() - t)
    return min(ts), r
for name, call in [("correlate 11^3, 512^3 float32", lambda d: nd.correlate(x, k, mode="nearest", device=d)),
                   ("gaussian_filter sigma 3, 512^3 float32", lambda d: nd.gaussian_filter(x, 3.0, device=d)),
                   ("median_filter size 3, 512^3 float32 (one GPU: the median takes no list)", lambda d: nd.median_filter(x, 3, device=d))]:
    t1, a = best(lambda: call("cuda:0"))
    t2, b = best(lambda: call("cuda:0,1"))
    print(f"{name}: one GPU {t1*1e3:.1f} ms, two GPUs {t2*1e3:.1f} ms, {t1/t2:.2f}x, bit for bit {np.array_equal(a.view(np.uint32), b.view(np.uint32))}")
PY
