#!/bin/bash
# wgmma-ws round 1 (issue 49): the warp-specialised wgmma bank kernel (wgmma_ws_bank_kernel: MMA
# warpgroups + one producer warpgroup, named barriers, setmaxnreg) against the current product
# default, each shape bit for bit the host emulation on the GPU before it is timed (3D, 4D
# sweeps); then the product's GPU tests (every compiled shape, the new ones among them), racecheck
# and memcheck on the small shapes, and ncu on the two warp-specialised 3D shapes. Logs in $L.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma-ws}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
chmod +x "$D"/wgmma_bank_sweep "$D"/ndconv_gpu_tests 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1
short() { sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//; s/ B shared/ B sh/' "$1" | cut -c1-125; }
echo "=== sweep 3d"
timeout 20 "$D/wgmma_bank_sweep" 3d > "$L/sweep3d.log" 2>&1; echo "rc=$?"
short "$L/sweep3d.log" | head -16; el sweep3d
echo "=== sweep 4d"
timeout 25 "$D/wgmma_bank_sweep" 4d > "$L/sweep4d.log" 2>&1; echo "rc=$?"
short "$L/sweep4d.log" | head -13; el sweep4d
echo "=== gpu tests"
timeout 40 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank*:GpuTensorCoreBank.EqualsTheHost*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|SKIPPED) |Failure|exception|wgmma shape' "$L/tests.log" | cut -c1-150 | head -14; el tests
for tool in racecheck memcheck; do
  left 80 || break
  echo "=== $tool"
  timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/$tool.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) " "$L/$tool.log" | head -3; el $tool
done
if left 90; then
  echo "=== ncu"
  timeout 12 ncu --clock-control none -k regex:wgmma_ws_bank_kernel -c 2 --section SpeedOfLight --section WarpStateStats "$D/wgmma_bank_sweep" profile > "$L/ncu.log" 2>&1; echo "rc=$?"
  grep -E "wgmma_ws_bank_kernel|Duration|Issue Slots Busy|Tensor is|Warp Cycles Per Issued|Compute \(SM\) Thr" "$L/ncu.log" | sed 's/ndconv::cuda_bank:://g' | cut -c1-120 | head -12; el ncu
fi
