#!/usr/bin/env bash
# GPU run A: the GPU suites of the new tree (core-layers) and of the baseline (b41c65d), and
# compute-sanitizer memcheck and racecheck on the default kernels, the bank, the median and the
# pipeline, all at once on one GPU (correctness only; nothing here is timed).
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
o=$OUT
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,memory.total --format=csv;
  nvcc --version 2>/dev/null | tail -2; nproc; } > $o/env.txt 2>&1
cat $o/env.txt
sanitize='CudaDense.Halo*:CudaDense.TiledBulk*:CudaDense.TiledBlockRows*:CudaSeparableLarge.*:CudaPipeline.*:CudaStoredTypes*:CudaDeviceEntryPoints*:CudaBufferCaches.*:GpuBank*:GpuAdaptiveResident*:FiltersGpu*'
race='CudaDense.TiledBlockRows*:CudaDense.FixedRowCode*:FiltersGpu.*:GpuBank.SevenTap*:GpuBank.EveryWidth*:CudaPipeline.ChunksEqualOnePass*:CudaSeparableLarge.*'
t0=$(date +%s)
timeout 560 ./new_ndconv_gpu_tests --gtest_brief=1 > $o/new_gpu_tests.txt 2>&1 & p1=$!
timeout 560 ./base_ndconv_gpu_tests --gtest_brief=1 > $o/base_gpu_tests.txt 2>&1 & p2=$!
timeout 560 compute-sanitizer --tool memcheck --error-exitcode 9 ./new_ndconv_gpu_tests --gtest_brief=1 --gtest_filter="$sanitize" > $o/memcheck.txt 2>&1 & p3=$!
timeout 560 compute-sanitizer --tool racecheck --error-exitcode 9 --launch-count 60 ./new_ndconv_gpu_tests --gtest_brief=1 --gtest_filter="$race" > $o/racecheck.txt 2>&1 & p4=$!
(timeout 300 ./new_ndconv_gpu_host_tests --gtest_brief=1 > $o/new_host_tests.txt 2>&1; echo "rc=$?" >> $o/new_host_tests.txt;
 timeout 200 ./new_ndconv_engine_tests --gtest_brief=1 > $o/new_engine_tests.txt 2>&1; echo "rc=$?" >> $o/new_engine_tests.txt) & p5=$!
for p in $p1 $p2 $p3 $p4 $p5; do wait $p; echo "job $p rc=$? at $(( $(date +%s) - t0 )) s"; done
for f in new_gpu_tests base_gpu_tests new_host_tests new_engine_tests; do echo "== $f"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED|rc=' $o/$f.txt | tail -6; done
echo "== memcheck"; grep -E 'ERROR SUMMARY|PASSED|FAILED' $o/memcheck.txt | tail -4
echo "== racecheck"; grep -E 'RACECHECK SUMMARY|PASSED|FAILED|hazard' $o/racecheck.txt | sort | uniq -c | tail -6
