#!/bin/bash
# amx-tiles round 2 (CPU only: the host Xeon's AMX; please run while no other request uses the
# CPU): dev/amx_tile_sweep in three processes (the tile orders bit for bit against emulate_tile and
# timed on 1, 8, 16 threads; probes of the tile unit: TDPBUSD alone, TILELOADD alone, reloads into
# the same or alternating registers, CPU pairs; the call: write bandwidth, the product's four tile
# orders through run_bank_int8 and filter_bank), dev/amx_bank_parts (16 and 1 threads),
# CpuInt8Bank.* of the branch (every tile order against the emulation), the bench rows of main
# (base) and the branch interleaved, three times.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/amx-tiles}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== sweep variants"
timeout 60 "$D/amx_tile_sweep" variants 1,8,16 > "$L/sweep-variants.txt" 2>&1; echo "rc=$?"
grep -c "bit for bit" "$L/sweep-variants.txt"; grep -E "DIFFERS|^[a-z_+]+ +(1|16) " "$L/sweep-variants.txt" | head -30; el variants
echo "=== probes"
timeout 40 "$D/amx_tile_sweep" probes 1,16 > "$L/sweep-probes.txt" 2>&1; echo "rc=$?"
grep -v "^$\|^check\|^B tiles\|^every\|^variant" "$L/sweep-probes.txt" | cut -c1-200 | head -16; el probes
echo "=== call"
timeout 60 "$D/amx_tile_sweep" call 16 > "$L/sweep-call.txt" 2>&1; echo "rc=$?"
grep -E "writing|median" "$L/sweep-call.txt" | head -14; el call
echo "=== parts"
timeout 30 "$D/amx_bank_parts" 16 > "$L/parts-16.txt" 2>&1; echo "rc=$?"
timeout 30 "$D/amx_bank_parts" 1 > "$L/parts-1.txt" 2>&1; echo "rc=$?"
grep -E "alone|combination|interleaving|run_bank" "$L/parts-16.txt" "$L/parts-1.txt" | cut -c1-120 | head -16; el parts
echo "=== CpuInt8Bank (branch)"
timeout 120 "$D/ndconv_engine_tests" --gtest_filter='CpuInt8Bank.*' > "$L/tests.txt" 2>&1; echo "rc=$?"
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure|accuracy" "$L/tests.txt" | head -16; el tests
echo "=== bench base / branch x3"
for b in base branch base branch base branch; do
  bin="$D/ndconv-perf"; [ $b = base ] && bin="$D/ndconv-perf-base"
  timeout 60 "$bin" bench --device cpu --workload cpu_bank_3d,cpu_bank_3d_u8 --call-reps 9 --json "$L/bench-$b-$(date +%s%N).json" > "$L/bench-$b-$(date +%s%N).txt" 2>&1; echo "$b rc=$?"
done
grep -h -E "^cpu_bank" "$L"/bench-base-*.txt | cut -c1-100; echo "(branch)"; grep -h -E "^cpu_bank" "$L"/bench-branch-*.txt | cut -c1-100
el bench
