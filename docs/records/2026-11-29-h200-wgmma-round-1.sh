#!/bin/bash
# wgmma round 1: dev/wgmma_probe (one wgmma tile against a host reference, N 48 and 96, both
# readings of the descriptor's offsets; the tensor pipe's wgmma rate), dev/wgmma_bank_sweep (the
# wgmma bank kernel's shapes, each checked bit for bit against the host emulation first, timed
# beside the mma.sync product kernel; 3D with the swapped descriptor too, then 4D), the SASS GMMA
# count; then, where present, the product's GPU tests (GpuWgmmaBank*, GpuTensorCoreBank*) and the
# bench's tensor-core rows.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader 2>&1 | head -2
echo "=== probe"
timeout 30 "$D/wgmma_probe" > "$L/probe.log" 2>&1; echo "rc=$?"; head -24 "$L/probe.log"; el probe
echo "=== sweep 3d (+ swapped descriptor)"
timeout 60 "$D/wgmma_bank_sweep" swap > "$L/sweep3d.log" 2>&1; echo "rc=$?"; cut -c1-150 "$L/sweep3d.log" | head -14; el sweep3d
echo "=== sweep 4d"
timeout 60 "$D/wgmma_bank_sweep" 4d > "$L/sweep4d.log" 2>&1; echo "rc=$?"; cut -c1-150 "$L/sweep4d.log" | head -8; el sweep4d
echo "=== sass"
timeout 10 cuobjdump --dump-sass "$D/wgmma_bank_sweep" > "$L/sass.txt" 2>&1
echo "GMMA lines: $(grep -c GMMA "$L/sass.txt")"; grep -o "[A-Z]*GMMA[.A-Z0-9x]*" "$L/sass.txt" | sort | uniq -c | head -5
if [ -x "$D/ndconv_gpu_tests" ]; then
  echo "=== gpu tests"
  timeout 60 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank*:GpuTensorCoreBank*' > "$L/tests.log" 2>&1; echo "rc=$?"
  grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure|accuracy|adaptive' -A2 "$L/tests.log" | cut -c1-160 | head -30; el tests
fi
if [ -x "$D/ndconv-perf" ]; then
  echo "=== bench"
  timeout 60 "$D/ndconv-perf" bench --workload bank_3d,bank_3d_tc,bank_4d,bank_4d_tc --quick > "$L/bench.log" 2>&1; echo "rc=$?"
  grep -E "^bank|peak|FMA" "$L/bench.log" | cut -c1-170 | head -12; el bench
fi
# The sanitizers on the small wgmma shapes, only while the round's time allows.
if [ -x "$D/ndconv_gpu_tests" ] && [ $(( $(date +%s) - t0 )) -lt 75 ]; then
  for tool in memcheck racecheck; do
    echo "=== $tool"
    timeout 20 compute-sanitizer --tool $tool --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/$tool.log" 2>&1; echo "rc=$?"
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Hazard|\[ *(OK|FAILED|SKIPPED) " "$L/$tool.log" | head -4; el $tool
    [ $(( $(date +%s) - t0 )) -lt 90 ] || break
  done
fi
