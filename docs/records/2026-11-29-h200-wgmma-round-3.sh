#!/bin/bash
# wgmma round 3 (if the lead has the time; it re-checks round 2's bug fix): the product's GPU
# tests (every compiled wgmma shape, the streamed one fixed, and the mma.sync kernel against the
# host emulation bit for bit; the policy's choice; the bank and adaptive-filter tests on the new
# default shapes), memcheck and racecheck on the small shapes, the bench's tensor-core rows on the
# new defaults (2 chunks a wgmma group), the SASS GMMA count, then the sweeps (streamed 4D shapes
# fixed). Full logs in $L; summary on stdout.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1
echo "=== gpu tests"
timeout 40 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank*:GpuTensorCoreBank.TheBankTakes*:GpuTensorCoreBank.TheAdaptive*:GpuTensorCoreBank.EqualsTheHost*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|SKIPPED) |Failure|exception|\[ adaptive' "$L/tests.log" | cut -c1-150 | head -12; el tests
for tool in memcheck racecheck; do
  left 45 || break
  echo "=== $tool"
  timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/$tool.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) " "$L/$tool.log" | head -3; el $tool
done
if left 70; then
  echo "=== bench"
  timeout 40 "$D/ndconv-perf" bench --workload bank_3d,bank_3d_tc,bank_4d,bank_4d_tc --quick > "$L/bench.log" 2>&1; echo "rc=$?"
  grep -E "^bank|^  bank" "$L/bench.log" | cut -c1-150 | head -8; el bench
fi
timeout 10 cuobjdump --dump-sass "$D/ndconv_gpu_tests" > "$L/sass.txt" 2>&1
echo "GMMA in ndconv_gpu_tests: $(grep -oE '[A-Z]*GMMA[.A-Z0-9x]*' "$L/sass.txt" | sort | uniq -c | tr '\n' ' ' | cut -c1-150)"
if left 85; then
  echo "=== sweep 4d"
  timeout 14 "$D/wgmma_bank_sweep" 4d > "$L/sweep4d.log" 2>&1; echo "rc=$?"
  sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//' "$L/sweep4d.log" | cut -c1-118 | head -9; el sweep4d
fi
if left 92; then
  echo "=== sweep 3d"
  timeout 8 "$D/wgmma_bank_sweep" 3d > "$L/sweep3d.log" 2>&1; echo "rc=$?"
  sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//' "$L/sweep3d.log" | cut -c1-118 | head -11; el sweep3d
fi
