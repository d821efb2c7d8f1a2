#!/usr/bin/env bash
# GPU run 4 (two H200s): the GPU suite after the backend's entry points give the caller its
# current device back, memcheck over the new suites, and the package's GPU tests on both GPUs.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT
t0=$(date +%s)
timeout 300 ./bin/ndconv_gpu_tests --gtest_brief=1 > $o/gpu_tests.txt 2>&1 & p1=$!
CUDA_VISIBLE_DEVICES=1 timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/ndconv_gpu_tests --gtest_brief=1 \
  --gtest_filter='GpuBoundaryModes*:CudaDeviceEntryPoints.*:CudaDevices.*:MedianDeviceGpu.*:FiltersGpu.Median*:FiltersGpu.RecursiveGaussian*' > $o/memcheck.txt 2>&1 & p2=$!
wait $p1; echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED' $o/gpu_tests.txt | tail -6
wait $p2; echo "memcheck rc=$? at $(( $(date +%s) - t0 )) s"; grep -E 'ERROR SUMMARY|PASSED|FAILED' $o/memcheck.txt | tail -3
(cd .. && timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py 2>&1 | tail -2)
