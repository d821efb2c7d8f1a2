#!/bin/bash
# wgmma-ws round 5 (optional, only if device time is left; issue 49): the 4D default is now round
# 4's fastest (4 M x 12 MMA warps at 152 registers: the producers no longer spill); a shape at 144
# registers (the producers 80) is added in 3D and 4D. The bench rows on the new default, the sweeps
# (152 against 144), the product's GPU tests (every shape) and racecheck on the small shapes.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma-ws}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
chmod +x "$D"/* 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1
short() { sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//; s/ B shared/ B sh/; s/ +/ /g' "$1" | cut -c1-118; }
echo "=== bench"
timeout 22 "$D/ndconv-perf" bench --workload bank_3d_tc,bank_4d_tc --quick --json "$L/bench.json" > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^device|^bank" "$L/bench.log" | cut -c1-160 | head -4; el bench
echo "=== sweep 3d"
timeout 6 "$D/wgmma_bank_sweep" 3d > "$L/sweep3d.log" 2>&1; echo "rc=$?"
short "$L/sweep3d.log" | grep -v "^bank" | head -6; el sweep3d
echo "=== sweep 4d"
timeout 8 "$D/wgmma_bank_sweep" 4d > "$L/sweep4d.log" 2>&1; echo "rc=$?"
short "$L/sweep4d.log" | grep -v "^bank" | head -5; el sweep4d
echo "=== gpu tests"
timeout 24 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.TheWgmmaKernel*:GpuWgmmaBank.TheProduct*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|SKIPPED) |Failure|exception|wgmma shape' "$L/tests.log" | cut -c1-150 | head -8; el tests
if left 58; then
  echo "=== racecheck"
  timeout 21 compute-sanitizer --tool racecheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/racecheck.log" 2>&1; echo "rc=$?"
  grep -E "RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) |Failure" "$L/racecheck.log" | head -4; el racecheck
fi
