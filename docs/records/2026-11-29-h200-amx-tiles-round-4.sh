#!/bin/bash
# amx-tiles round 4 (CPU only: the host Xeon's AMX; please run while no other request uses the
# CPU): the branch now expands row y of every plane of a run once and walks a column of A tiles
# down the run's output planes (the A tiles of consecutive outputs shared in L1). CpuInt8Bank.*
# (the three tile orders against the emulation on AMX), amx_tile_sweep call (the product's orders
# through run_bank_int8, filter_bank; 16 and 8 threads), the bench rows of main (base) and the
# branch x3 interleaved.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/amx-tiles}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== CpuInt8Bank (branch)"
timeout 100 "$D/ndconv_engine_tests" --gtest_filter='CpuInt8Bank.*' > "$L/tests.txt" 2>&1; echo "rc=$?"
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure" -A2 "$L/tests.txt" | head -14; grep accuracy "$L/tests.txt" | head -12; el tests
echo "=== call"
timeout 40 "$D/amx_tile_sweep" call 16 > "$L/sweep-call.txt" 2>&1; echo "rc=$?"
grep -E "median" "$L/sweep-call.txt" | head -8; el call
echo "=== bench base / branch x3"
for b in base branch base branch base branch; do
  bin="$D/ndconv-perf"; [ $b = base ] && bin="$D/ndconv-perf-base"
  timeout 40 "$bin" bench --device cpu --workload cpu_bank_3d,cpu_bank_3d_u8 --call-reps 9 --json "$L/bench-$b-$(date +%s%N).json" > "$L/bench-$b-$(date +%s%N).txt" 2>&1; echo "$b rc=$?"
done
grep -h -E "^cpu_bank" "$L"/bench-base-*.txt | cut -c1-100; echo "(branch)"; grep -h -E "^cpu_bank" "$L"/bench-branch-*.txt | cut -c1-100
el bench
