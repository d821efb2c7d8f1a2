#!/bin/bash
# median-cols round 1: the median GPU tests (main's kernel), the bench's median rows (main's
# kernel), dev/median_sweep (main's kernel beside the lean/cols variants, each checked bit for bit
# against a sort-based reference on NaNs/ties/zeros/inf under every boundary), SASS opcode counts,
# and an ncu profile of main, lean16 and cols8.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/median-cols}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== gpu tests (median)"
timeout 15 "$D/ndconv_gpu_tests" --gtest_filter='FiltersGpu.Median*:MedianDeviceGpu*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|PASSED) |Failure' -A2 "$L/tests.log" | head -16; el tests
echo "=== bench (main's kernel)"
timeout 14 "$D/ndconv-perf" bench --workload median3d_r1,median3d_r3,median2d_r3 --quick > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^median|floor|bandwidth" "$L/bench.log" | cut -c1-160 | head -8; el bench
echo "=== sweep"
timeout 10 "$D/median_sweep" > "$L/sweep.log" 2>&1; echo "rc=$?"; cat "$L/sweep.log" | head -30; el sweep
echo "=== sass"
timeout 5 cuobjdump -sass "$D/median_sweep" > "$L/sass.txt" 2>&1
python3 "$D/sass_count.py" < "$L/sass.txt" > "$L/sass_counts.txt" 2>&1; cut -c1-230 "$L/sass_counts.txt"; el sass
echo "=== ncu"
timeout 25 ncu --clock-control none --section SpeedOfLight --section InstructionStats --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy "$D/median_sweep" profile main lean16 cols8 fused14 > "$L/ncu.log" 2>&1; echo "rc=$?"
grep -E "Context [0-9]+, Stream|Duration|Compute \(SM\) Throughput|Executed Instructions  |Issue Slots Busy|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|Block Limit (Reg|Shared)" "$L/ncu.log" | grep -v "Executed Instructions Per" | sed -E "s/\(const float.*Device/ /" | cut -c1-120 | head -45; el ncu
