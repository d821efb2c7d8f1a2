#!/usr/bin/env bash
# GPU run 10: the GPU suite of the final tree (the FFT path, one volume over GPUs, the CPU cost
# model and io changes merged), the package's GPU tests and dask's CuPy-chunk test; on two GPUs
# also the one-volume timings (multi_gpu.py), printed to stdout.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s)
gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
if [ "$gpus" -ge 2 ]; then
  for shape in 20x160x160x160 64x128x128x128; do
    timeout 120 python3 ../python/benchmarks/multi_gpu.py --devices cuda:0,1 --shape $shape 2>&1 | tr -d '\n' | sed 's/  */ /g'; echo
    echo "rc=$? at $(( $(date +%s) - t0 )) s"
  done
fi
timeout 300 ./bin/ndconv_gpu_tests --gtest_brief=1 > /tmp/gpu_tests.txt 2>&1; echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED|tests from .* test suites ran' /tmp/gpu_tests.txt | tail -8
(cd .. && timeout 90 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py 2>&1 | tail -2)
(cd .. && timeout 60 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k cupy 2>&1 | tail -1)
echo "done at $(( $(date +%s) - t0 )) s"
