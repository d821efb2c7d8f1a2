#!/usr/bin/env bash
# GPU run D: the GPU suite on 5afef34 (the median's, the recursive Gaussian's and the bank's host
# staging shared), and memcheck over those families.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
o=$OUT
timeout 300 ./new_ndconv_gpu_tests --gtest_brief=1 > $o/gpu_tests.txt 2>&1 & p1=$!
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 ./new_ndconv_gpu_tests --gtest_brief=1 --gtest_filter='FiltersGpu*:GpuBank*:GpuAdaptiveResident*:CudaPipeline.*' > $o/memcheck.txt 2>&1 & p2=$!
wait $p1; echo "gpu tests rc=$?"; wait $p2; echo "memcheck rc=$?"
grep -E '^\[  (PASSED|FAILED) |FAILED' $o/gpu_tests.txt | tail -4; grep -E 'ERROR SUMMARY|PASSED|FAILED' $o/memcheck.txt | tail -3
