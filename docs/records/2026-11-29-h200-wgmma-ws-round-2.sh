#!/bin/bash
# wgmma-ws round 2 (issue 49). Round 1 hung: setmaxnreg's counts did not add up to the block's
# registers (the MMA warps waited forever for registers); fixed (ws_producer_registers) and
# guarded. Now: the sweeps (each kernel bit for bit the host emulation first, line-buffered, a
# kernel not done in 3 s printed as HANG and the sweep restarted after it), then the product
# (default: warp-specialised 3D N 96, 4D N 48): bench rows, GPU tests (every shape), racecheck,
# memcheck, ncu. Logs in $L.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma-ws}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
chmod +x "$D"/wgmma_bank_sweep "$D"/ndconv_gpu_tests "$D"/ndconv-perf 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1
short() { sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//; s/ B shared/ B sh/; s/ +/ /g' "$1" | cut -c1-118; }
hung=0
sweep() {  # mode, seconds
  local k=0 rc
  : > "$L/sweep$1.log"
  for attempt in 1 2 3 4; do
    timeout "$2" "$D/wgmma_bank_sweep" "$1" "$k" >> "$L/sweep$1.log" 2>&1; rc=$?
    echo "rc=$rc (from $k)"
    [ $rc -eq 3 ] || break
    hung=1
    k=$(( $(grep -E '^\[[0-9]+\].*HANG' "$L/sweep$1.log" | tail -1 | sed -E 's/^\[([0-9]+)\].*/\1/') + 1 ))
  done
}
echo "=== sweep 3d"; sweep 3d 25; short "$L/sweep3d.log" | grep -v "^bank" | head -22; el sweep3d
echo "=== sweep 4d"; sweep 4d 30; short "$L/sweep4d.log" | grep -v "^bank" | head -18; el sweep4d
# The product's shapes (wgmma.cu) among the sweeps' names: a hang there would hang the product runs.
P='WS N96 2 M, 8 MMA warps x 2, B3, G2, O |WS N48 4 M, 8 MMA warps, B3, G1, O |WS T2 N48 4 M, 4 MMA warps, B3, G1, R216, O |WS N48 4 M, 8 MMA warps, B2, G1, O |WS T2 N48 4 M, 4 MMA warps, B2, G1, R216, O |WS N96 2 M, 8 MMA warps x 2, streamed, B3, G2, O '
if [ $hung -eq 1 ] && grep -h HANG "$L"/sweep*.log | grep -qE "$P"; then echo "a product shape hung in the sweeps: product runs skipped"; exit 0; fi
echo "=== bench"
timeout 40 "$D/ndconv-perf" bench --workload bank_3d_tc,bank_4d_tc --quick --json "$L/bench.json" > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^device|^bank" "$L/bench.log" | cut -c1-160 | head -4; el bench
echo "=== gpu tests"
timeout 40 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank*:GpuTensorCoreBank.TheBankTakes*:GpuTensorCoreBank.TheAdaptive*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|SKIPPED) |Failure|exception|wgmma shape|\[ adaptive' "$L/tests.log" | cut -c1-150 | head -12; el tests
for tool in racecheck memcheck; do
  if [ $tool = racecheck ]; then left 72 || break; lim=25; else left 88 || break; lim=10; fi
  echo "=== $tool"
  timeout $lim compute-sanitizer --tool $tool --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/$tool.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) " "$L/$tool.log" | head -3; el $tool
done
if left 92; then
  echo "=== ncu"
  timeout 7 ncu --clock-control none -k regex:wgmma_ws_bank_kernel -c 2 --section SpeedOfLight --section WarpStateStats "$D/wgmma_bank_sweep" profile > "$L/ncu.log" 2>&1; echo "rc=$?"
  grep -E "wgmma_ws_bank_kernel|Duration|Issue Slots Busy|Tensor is|Warp Cycles Per Issued" "$L/ncu.log" | sed 's/ndconv::cuda_bank:://g' | cut -c1-110 | head -10; el ncu
fi
