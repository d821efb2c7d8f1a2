#!/usr/bin/env bash
# cpu-xeon round 1: the Xeon host's topology, the CPU rows at 1..16 threads, the rings' split,
# the parts of the dense call (kernel, padding, threads), the bank at 1..16 threads.
D=$(dirname "$0"); L=${L:-$OUT/cpu-xeon}; mkdir -p "$L"; S=$(date +%s)
{
  lscpu; echo; lscpu -e; echo; nproc; grep -m1 "model name" /proc/cpuinfo; grep -m1 "^flags" /proc/cpuinfo
  for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$c $(cat $c/topology/thread_siblings_list 2>/dev/null) core $(cat $c/topology/core_id 2>/dev/null)"; done
  cat /sys/fs/cgroup/cpu.max /sys/fs/cgroup/cpu.stat 2>&1 | head -12
  numactl -H 2>&1 | head -5; free -g; uptime
} > "$L/topology.txt" 2>&1
echo "== topology"; grep -E "^(Model name|CPU\(s\)|Thread|Core|Socket|L2|L3|NUMA node0)" "$L/topology.txt"
echo "nproc $(nproc); cpu.max $(cat /sys/fs/cgroup/cpu.max 2>/dev/null); $(uptime)"
echo "== probe (16 threads)"
timeout 120 "$D/cpu_rows_probe" 16 > "$L/probe.txt" 2>&1; echo "probe rc $?"
grep -E "^(fma|parallel_for|dense T=(16| 1) rule|ring parts|bank)" "$L/probe.txt" | cut -c1-200 | head -30
grep -E "^dense T=16" "$L/probe.txt" | sed -E 's/^dense T=16 (.*[^ ]) +median ([0-9.]+) ms min ([0-9.]+).*/\1: \2\/\3/' | tr '\n' ';'; echo
echo "== bench rows at 16 (x3), 8, 4, 1 threads"
for t in 16 16 16 8 4 1; do
  timeout 60 "$D/ndconv-perf" bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 7 --threads $t --json "$L/bench-t$t-$RANDOM.json" > "$L/bench-t$t.txt" 2>&1
  echo "T=$t rc $?: $(grep -E '^cpu' "$L/bench-t$t.txt" | awk '{print $1, $2, $3, $6}' | tr '\n' ';')"
done
cat /sys/fs/cgroup/cpu.stat 2>/dev/null | head -6 > "$L/cpu-stat-after.txt"
echo "== dense split variants again (noise)"
timeout 60 "$D/cpu_rows_probe" 16 dense > "$L/probe-dense-2.txt" 2>&1
grep -E "^dense T=16" "$L/probe-dense-2.txt" | sed -E 's/^dense T=16 (.*[^ ]) +median ([0-9.]+) ms min ([0-9.]+).*/\1: \2\/\3/' | tr '\n' ';'; echo
echo "elapsed $(( $(date +%s) - S )) s"
