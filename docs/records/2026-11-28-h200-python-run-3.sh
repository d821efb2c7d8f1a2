#!/usr/bin/env bash
# GPU run 3 (two H200s): a batch whose filtering outweighs its reading and writing: true-4D
# adaptive filtering of 6 echo-sized series (16 frames of 128^3, uint8 in and out), on one GPU
# and spread over two; outputs byte for byte.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
rm -rf /tmp/in4 /tmp/a1 /tmp/a2; mkdir -p /tmp/in4 /tmp/a1 /tmp/a2
python3 - <<'PY'
import numpy as np, ndconv
rng = np.random.default_rng(1)
for i in range(6):
    v = (rng.random((16, 128, 128, 128)) * 255).astype(np.uint8)
    ndconv.write(f"/tmp/in4/s{i}.nii", v, spacing=(0.05, 0.6, 0.6, 0.6))
PY
run() { local t0=$(date +%s%N); ./bin/ndconv "$@" > /tmp/log.txt 2>&1; local rc=$?; local t1=$(date +%s%N);
  echo "rc=$rc $(( (t1 - t0) / 1000000 )) ms: ndconv $1 ... ${@: -3}"; tail -1 /tmp/log.txt; }
for rep in 1 2; do
  rm -f /tmp/a1/* /tmp/a2/*
  run adaptive /tmp/in4/*.nii -o /tmp/a1/ --preset echo --type uint8 --device cuda:0
  run adaptive /tmp/in4/*.nii -o /tmp/a2/ --preset echo --type uint8 --device cuda:0,1
done
./bin/ndconv adaptive /tmp/in4/s0.nii /tmp/single.nii --preset echo --type uint8 --device cuda:1 -v 2>&1 | grep -E "timings|plan" | head -12
same=0; differ=0
for f in /tmp/a1/*; do cmp -s $f /tmp/a2/$(basename $f) && same=$((same+1)) || differ=$((differ+1)); done
echo "outputs byte-identical: $same, differing: $differ"
(cd .. && timeout 100 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py -k "second_device" 2>&1 | tail -1)
# The GPU suite of the merged tree (reflect, constant, the median's value and device entry), on
# GPU 0 alone after the timings, and memcheck over the new suites.
o=$OUT
timeout 300 ./bin/ndconv_gpu_tests --gtest_brief=1 > $o/gpu_tests.txt 2>&1; echo "gpu tests rc=$?"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED' $o/gpu_tests.txt | tail -6
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/ndconv_gpu_tests --gtest_brief=1 \
  --gtest_filter='GpuBoundaryModes*:CudaDeviceEntryPoints.*:MedianDeviceGpu.*:FiltersGpu.Median*:FiltersGpu.RecursiveGaussian*' > $o/memcheck.txt 2>&1
echo "memcheck rc=$?"; grep -E 'ERROR SUMMARY|PASSED|FAILED' $o/memcheck.txt | tail -3
