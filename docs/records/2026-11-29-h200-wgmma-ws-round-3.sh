#!/bin/bash
# wgmma-ws round 3 (issue 49). Round 2's racecheck reported hazards between the producers' builds
# and the MMA warps' loads, ordered by named barriers (bar.arrive -> bar.sync); the buffers now
# pass through mbarriers. Here: a two-warp probe of both hand-offs under racecheck (is it the
# tool?), racecheck on the product's small shapes (every shape, mbarriers), the sweeps (mbarriers
# against named barriers, the round-2 winners, each bit for bit first), the bench rows on the new
# defaults (3D: N 96, 12 MMA warps; 4D: N 48, 12 MMA warps), memcheck. Logs in $L.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/wgmma-ws}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
chmod +x "$D"/* 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -1
short() { sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//; s/ B shared/ B sh/; s/ +/ /g' "$1" | cut -c1-118; }
echo "=== probe"
for m in named mbarrier; do
  timeout 10 compute-sanitizer --tool racecheck "$D/barrier_racecheck_probe" $m > "$L/probe-$m.log" 2>&1; echo "rc=$?"
  grep -E "hand-off|RACECHECK SUMMARY" "$L/probe-$m.log" | head -2
done; el probe
echo "=== racecheck"
timeout 28 compute-sanitizer --tool racecheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/racecheck.log" 2>&1; echo "rc=$?"
grep -E "RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) |Failure" "$L/racecheck.log" | head -4; el racecheck
sweep() {  # mode, seconds
  local k=0 rc
  : > "$L/sweep$1.log"
  for attempt in 1 2 3; do
    timeout "$2" "$D/wgmma_bank_sweep" "$1" "$k" >> "$L/sweep$1.log" 2>&1; rc=$?
    echo "rc=$rc (from $k)"
    [ $rc -eq 3 ] || break
    k=$(( $(grep -E '^\[[0-9]+\].*HANG' "$L/sweep$1.log" | tail -1 | sed -E 's/^\[([0-9]+)\].*/\1/') + 1 ))
  done
}
echo "=== sweep 3d"; sweep 3d 15; short "$L/sweep3d.log" | grep -v "^bank" | head -9; el sweep3d
echo "=== sweep 4d"; sweep 4d 20; short "$L/sweep4d.log" | grep -v "^bank" | head -8; el sweep4d
if left 58; then
  echo "=== bench"
  timeout 24 "$D/ndconv-perf" bench --workload bank_3d_tc,bank_4d_tc --quick --json "$L/bench.json" > "$L/bench.log" 2>&1; echo "rc=$?"
  grep -E "^device|^bank" "$L/bench.log" | cut -c1-160 | head -4; el bench
fi
if left 72; then
  echo "=== memcheck"
  timeout 8 compute-sanitizer --tool memcheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/memcheck.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|\[ *(OK|FAILED|SKIPPED) " "$L/memcheck.log" | head -3; el memcheck
fi
