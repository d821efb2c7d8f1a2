#!/bin/bash
# amx-tiles round 1 (CPU only: the host Xeon's AMX): the CPU's topology, dev/amx_tile_sweep (each
# order of the 8-bit bank's tiles bit for bit against emulate_tile, then timed on 1, 8, 16 threads;
# probes of TDPBUSD and TILELOADD alone; which CPUs share a tile unit; the outputs' write bandwidth;
# filter_bank against run_bank_int8 alone), CpuInt8Bank.* of the branch (two A tiles per B load),
# the bench rows cpu_bank_3d / cpu_bank_3d_u8 of main (base) and of the branch, interleaved.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/amx-tiles}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== cpu"
{ lscpu; echo; for c in 0 1 7 8 15; do echo "cpu$c siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list 2>/dev/null) core $(cat /sys/devices/system/cpu/cpu$c/topology/core_id 2>/dev/null)"; done; echo "cgroup cpu.max: $(cat /sys/fs/cgroup/cpu.max 2>/dev/null)"; grep MHz /proc/cpuinfo | head -16; nproc; } > "$L/cpu.txt" 2>&1
grep -E "Model name|^CPU\(s\)|Thread\(s\)|Core\(s\)|Socket|MHz|L1d|L2|L3|NUMA node\(s\)|Hypervisor|siblings|cgroup" "$L/cpu.txt" | head -20; el cpu
echo "=== sweep"
timeout 100 "$D/amx_tile_sweep" all 1,8,16 > "$L/sweep.txt" 2>&1; echo "rc=$?"
grep -v "^check" "$L/sweep.txt" | head -62; grep -c "bit for bit" "$L/sweep.txt"; grep DIFFERS "$L/sweep.txt"; el sweep
echo "=== CpuInt8Bank (branch)"
timeout 120 "$D/ndconv_engine_tests" --gtest_filter='CpuInt8Bank.*' > "$L/tests.txt" 2>&1; echo "rc=$?"
grep -E "^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure" -A2 "$L/tests.txt" | head -16; el tests
echo "=== bench base / branch / base / branch"
for b in base branch base branch; do
  bin="$D/ndconv-perf"; [ $b = base ] && bin="$D/ndconv-perf-base"
  timeout 60 "$bin" bench --device cpu --workload cpu_bank_3d,cpu_bank_3d_u8 --call-reps 7 --json "$L/bench-$b-$(date +%s).json" > "$L/bench-$b.txt" 2>&1; echo "$b rc=$?"
  grep -E "^cpu_bank" "$L/bench-$b.txt" | cut -c1-150
done
timeout 30 "$D/ndconv-perf" bench --device cpu --workload cpu_bank_3d_u8 --threads 8 --call-reps 7 > "$L/bench-branch-8.txt" 2>&1; echo "8 threads rc=$?"; grep -E "^cpu_bank" "$L/bench-branch-8.txt" | cut -c1-150
el bench
