#!/bin/bash
# median-cols round 2: the branch's median (sorted columns, Tuning default 14 outputs a thread):
# the median GPU tests, the bench's median rows, dev/median_sweep (main's kernel beside the
# product's column shapes and the dev variants, each checked bit for bit against a sort-based
# reference under every boundary), memcheck and racecheck over the median device test, SASS
# counts, ncu SpeedOfLight + instruction count of the product kernel.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/median-cols}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== gpu tests (median)"
timeout 10 "$D/ndconv_gpu_tests" --gtest_filter='FiltersGpu.Median*:MedianDeviceGpu*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|PASSED) |Failure' -A2 "$L/tests.log" | grep -v "^--" | head -12; el tests
echo "=== bench (branch)"
timeout 9 "$D/ndconv-perf" bench --workload median3d_r1,median3d_r3,median2d_r3 --quick > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^median|bandwidth" "$L/bench.log" | cut -c1-160 | head -5; el bench
echo "=== sweep"
timeout 8 "$D/median_sweep" > "$L/sweep.log" 2>&1; echo "rc=$?"; head -16 "$L/sweep.log"; el sweep
echo "=== memcheck"
timeout 18 compute-sanitizer --tool memcheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='MedianDeviceGpu.MatchesReferenceAndCpuBitForBit:MedianDeviceGpu.EveryColumnShapeMatchesTheReference' > "$L/memcheck.log" 2>&1; echo "memcheck rc=$?"; tail -1 "$L/memcheck.log"; el memcheck
echo "=== racecheck"
timeout 16 compute-sanitizer --tool racecheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='MedianDeviceGpu.MatchesReferenceAndCpuBitForBit' > "$L/racecheck.log" 2>&1; echo "racecheck rc=$?"; tail -1 "$L/racecheck.log"; el racecheck
timeout 3 cuobjdump -sass "$D/median_sweep" > "$L/sass.txt" 2>&1; python3 "$D/sass_count.py" < "$L/sass.txt" > "$L/sass_counts.txt" 2>&1
grep -E "columns_kernel|median_kernel" "$L/sass_counts.txt" | cut -c1-220 | head -9
echo "=== ncu"
timeout 6 ncu --clock-control none --section SpeedOfLight --section InstructionStats "$D/median_sweep" profile columns14 > "$L/ncu.log" 2>&1; echo "rc=$?"
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput  |Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued" "$L/ncu.log" | grep -v "Per Scheduler" | cut -c1-100; el ncu
