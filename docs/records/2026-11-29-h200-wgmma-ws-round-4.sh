#!/bin/bash
# wgmma-ws round 4 (issue 49): the final product (warp-specialised wgmma kernel, mbarriers only;
# defaults 3D N 96 x 12 MMA warps, 4D N 48 x 12 MMA warps): GPU tests (every shape), racecheck and
# memcheck on the small shapes, the bench rows, then the sweeps (B2/B3, setmaxnreg 152/160,
# streamed N 48 weights in 4D; each bit for bit first). Logs in $L.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma-ws}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
chmod +x "$D"/* 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1
short() { sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//; s/ B shared/ B sh/; s/ +/ /g' "$1" | cut -c1-118; }
echo "=== gpu tests"
timeout 36 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank*:GpuTensorCoreBank.TheBankTakes*:GpuTensorCoreBank.TheAdaptive*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|SKIPPED) |Failure|exception|wgmma shape|\[ adaptive' "$L/tests.log" | cut -c1-150 | head -12; el tests
echo "=== racecheck"
timeout 22 compute-sanitizer --tool racecheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/racecheck.log" 2>&1; echo "rc=$?"
grep -E "RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) |Failure" "$L/racecheck.log" | head -4; el racecheck
if left 62; then
  echo "=== memcheck"
  timeout 6 compute-sanitizer --tool memcheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/memcheck.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|\[ *(OK|FAILED|SKIPPED) " "$L/memcheck.log" | head -3; el memcheck
fi
if left 50; then
  echo "=== bench"
  timeout 22 "$D/ndconv-perf" bench --workload bank_3d_tc,bank_4d_tc --quick --json "$L/bench.json" > "$L/bench.log" 2>&1; echo "rc=$?"
  grep -E "^device|^bank" "$L/bench.log" | cut -c1-160 | head -4; el bench
fi
if left 72; then
  echo "=== sweep 3d"
  timeout 6 "$D/wgmma_bank_sweep" 3d > "$L/sweep3d.log" 2>&1; echo "rc=$?"
  short "$L/sweep3d.log" | grep -v "^bank" | head -7; el sweep3d
fi
if left 70; then
  echo "=== sweep 4d"
  timeout 9 "$D/wgmma_bank_sweep" 4d > "$L/sweep4d.log" 2>&1; echo "rc=$?"
  short "$L/sweep4d.log" | grep -v "^bank" | head -7; el sweep4d
fi
