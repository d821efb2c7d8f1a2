#!/bin/bash
# amx-tiles round 3 (CPU only: the host Xeon's AMX; please run while no other request uses the
# CPU): the branch now expands every plane's row into A tiles of 64-byte rows once (no split tile
# loads) and runs one A tile a call (7 tile registers) by default. CpuInt8Bank.* (both tile orders
# against the emulation on AMX), amx_tile_sweep variants (1, 16 threads) and call (the product's
# orders, filter_bank), amx_bank_parts 16, the bench rows of main (base) and the branch x3.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/amx-tiles}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== CpuInt8Bank (branch)"
timeout 100 "$D/ndconv_engine_tests" --gtest_filter='CpuInt8Bank.*' > "$L/tests.txt" 2>&1; echo "rc=$?"
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure" -A2 "$L/tests.txt" | head -14; el tests
echo "=== sweep variants"
timeout 40 "$D/amx_tile_sweep" variants 1,16 > "$L/sweep-variants.txt" 2>&1; echo "rc=$?"
grep -c "bit for bit" "$L/sweep-variants.txt"; grep -E "DIFFERS|^(old|product|product_pair|product_four|pair|stage) +(1|16) " "$L/sweep-variants.txt" | head -14; el variants
echo "=== call"
timeout 40 "$D/amx_tile_sweep" call 16 > "$L/sweep-call.txt" 2>&1; echo "rc=$?"
grep -E "median" "$L/sweep-call.txt" | head -8; el call
echo "=== parts"
timeout 20 "$D/amx_bank_parts" 16 > "$L/parts-16.txt" 2>&1; echo "rc=$?"
grep -E "alone|combination|interleaving|run_bank" "$L/parts-16.txt" | cut -c1-100 | head -9; el parts
echo "=== bench base / branch x3"
for b in base branch base branch base branch; do
  bin="$D/ndconv-perf"; [ $b = base ] && bin="$D/ndconv-perf-base"
  timeout 40 "$bin" bench --device cpu --workload cpu_bank_3d,cpu_bank_3d_u8 --call-reps 9 --json "$L/bench-$b-$(date +%s%N).json" > "$L/bench-$b-$(date +%s%N).txt" 2>&1; echo "$b rc=$?"
done
grep -h -E "^cpu_bank" "$L"/bench-base-*.txt | cut -c1-100; echo "(branch)"; grep -h -E "^cpu_bank" "$L"/bench-branch-*.txt | cut -c1-100
el bench
