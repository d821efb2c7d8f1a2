#!/usr/bin/env bash
# GPU run B1: the GPU suite and memcheck on the final CUDA code of core-layers (e99b0f9), then the
# bench of the baseline (b41c65d) and of core-layers, one after the other on an idle GPU.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
o=$OUT
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,memory.total --format=csv; } > $o/env.txt 2>&1
cat $o/env.txt
t0=$(date +%s)
sanitize='CudaPipeline.*:CudaStoredTypes*:CudaDeviceEntryPoints*:GpuBank*:GpuAdaptiveResident*:FiltersGpu*:CudaDense.TiledBlockRows*'
timeout 300 ./new_ndconv_gpu_tests --gtest_brief=1 > $o/new_gpu_tests.txt 2>&1 & p1=$!
timeout 300 compute-sanitizer --tool memcheck --error-exitcode 9 ./new_ndconv_gpu_tests --gtest_brief=1 --gtest_filter="$sanitize" > $o/memcheck.txt 2>&1 & p2=$!
wait $p1; echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"; wait $p2; echo "memcheck rc=$? at $(( $(date +%s) - t0 )) s"
grep -E '^\[  (PASSED|FAILED) |FAILED' $o/new_gpu_tests.txt | tail -4; grep -E 'ERROR SUMMARY|PASSED|FAILED' $o/memcheck.txt | tail -3
for who in base new; do
  timeout 200 ./${who}_ndconv-perf bench --json $o/bench-$who.json --force > $o/bench-$who.txt 2>&1
  echo "bench $who rc=$? at $(( $(date +%s) - t0 )) s"
done
grep -E '^(device|dense|gauss|median|api)' $o/bench-base.txt | head -30
echo ----
grep -E '^(device|dense|gauss|median|api)' $o/bench-new.txt | head -30
