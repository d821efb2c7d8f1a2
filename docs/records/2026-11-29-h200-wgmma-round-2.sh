#!/bin/bash
# wgmma round 2: the wgmma bank's block shapes timed beside the mma.sync product (dev sweep, each
# checked bit for bit against the host emulation first), the product's GPU tests (every compiled
# wgmma shape and the mma.sync kernel against the host emulation bit for bit, the policy's
# choice, the bank and adaptive-filter tests on the default shape), the bench's tensor-core rows,
# the SASS GMMA count, memcheck and racecheck on the small shapes, the probe's loop rates, and an
# ncu profile of the default shapes if time is left. Full logs in $L; summary on stdout.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1
echo "=== sweep 3d"
timeout 30 "$D/wgmma_bank_sweep" 3d > "$L/sweep3d.log" 2>&1; echo "rc=$?"
sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//' "$L/sweep3d.log" | cut -c1-118 | head -16; el sweep3d
echo "=== sweep 4d"
timeout 30 "$D/wgmma_bank_sweep" 4d > "$L/sweep4d.log" 2>&1; echo "rc=$?"
sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//' "$L/sweep4d.log" | cut -c1-118 | head -12; el sweep4d
echo "=== gpu tests"
timeout 40 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank*:GpuTensorCoreBank.TheBankTakes*:GpuTensorCoreBank.TheAdaptive*:GpuTensorCoreBank.EqualsTheHost*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|SKIPPED) |Failure|\[ adaptive' "$L/tests.log" | cut -c1-120 | head -12; el tests
echo "=== bench"
timeout 40 "$D/ndconv-perf" bench --workload bank_3d,bank_3d_tc,bank_4d,bank_4d_tc --quick > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^bank|peak" "$L/bench.log" | cut -c1-150 | head -6; el bench
echo "=== sass"
timeout 10 cuobjdump --dump-sass "$D/ndconv_gpu_tests" > "$L/sass.txt" 2>&1
echo "GMMA in ndconv_gpu_tests: $(grep -c GMMA "$L/sass.txt") lines: $(grep -oE '[A-Z]*GMMA[.A-Z0-9x]*' "$L/sass.txt" | sort | uniq -c | tr '\n' ' ' | cut -c1-150)"
for tool in memcheck racecheck; do
  left 72 || break
  echo "=== $tool"
  timeout 20 compute-sanitizer --tool $tool --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/$tool.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) " "$L/$tool.log" | head -3; el $tool
done
if left 84; then
  echo "=== probe loops"
  timeout 8 "$D/wgmma_probe" > "$L/probe.log" 2>&1; echo "rc=$?"; grep -E "^loop|CONFIRMED|WRONG" "$L/probe.log" | cut -c1-140; el probe
fi
if left 86; then
  echo "=== ncu"
  timeout 14 ncu --clock-control none -k regex:wgmma_bank_kernel -c 2 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats "$D/wgmma_bank_sweep" profile > "$L/ncu.log" 2>&1; echo "rc=$?"
  grep -E "wgmma_bank_kernel|Duration|Compute \(SM\) Throughput|Tensor|Issue Slots Busy|Warp Cycles Per Issued" "$L/ncu.log" | cut -c1-120 | head -14; el ncu
fi
