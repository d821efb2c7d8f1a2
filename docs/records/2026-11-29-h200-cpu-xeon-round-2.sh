#!/usr/bin/env bash
# cpu-xeon round 2: the branch's CPU rows (parked workers, the rings' split model, shared padded
# copy or windows) against main's binary, interleaved, 16 threads; the probe's variants of the
# rings, memory bandwidth, the bank at 1..16 threads.
D=$(dirname "$0"); L=${L:-$OUT/cpu-xeon}; mkdir -p "$L"; S=$(date +%s)
echo "$(nproc) cpus; $(uptime)"
row() {  # binary label: one bench of both rows at 16 threads
  timeout 60 "$D/$1" bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 9 --threads 16 --json "$L/bench-$2.json" > "$L/bench-$2.txt" 2>&1
  echo "$2 rc $?: $(grep -E '^cpu' "$L/bench-$2.txt" | awk '{print $1, $2, $3, $6}' | tr '\n' ';')"
}
echo "== bench rows, 16 threads: branch (b) and main (m) interleaved"
for i in 1 2 3 4 5; do row ndconv-perf b$i; [ $i -le 3 ] && row ndconv-perf-main m$i; done
echo "== probe: parallel_for (parked workers now), memory"
timeout 30 "$D/cpu_rows_probe" 16 spawn > "$L/probe-spawn.txt" 2>&1; grep -E "T=(16| 8)" "$L/probe-spawn.txt" | cut -c1-160
timeout 30 "$D/cpu_rows_probe" 16 bw > "$L/probe-bw.txt" 2>&1; grep memory "$L/probe-bw.txt"
echo "== probe: dense at 1..16 threads (rule), variants at 16 (median/min ms)"
timeout 90 "$D/cpu_rows_probe" 16 dense > "$L/probe-dense.txt" 2>&1; echo "rc $?"
grep -E "rule" "$L/probe-dense.txt" | sed -E 's/^dense (T=..) rule +median ([0-9.]+) ms min ([0-9.]+).*columns of ([0-9]+), runs of ([0-9]+).*/\1 \2\/\3 c\4 r\5/'
grep -E "^dense T=16" "$L/probe-dense.txt" | grep -v rule | sed -E 's/^dense T=16 (.*[^ ]) +median ([0-9.]+) ms min ([0-9.]+).*/\1: \2\/\3/' | tr '\n' ';' | fold -w 200; echo
grep -E "^dense T=16 rule" "$L/probe-dense.txt" | grep -o "boundary-padded[^]]*\|CPU kernels[^]]*" | head -2
grep -E "ring parts" "$L/probe-dense.txt" | cut -c1-200
echo "== probe: bank"
timeout 60 "$D/cpu_rows_probe" 16 bank > "$L/probe-bank.txt" 2>&1; grep -E "^bank" "$L/probe-bank.txt" | cut -c1-110 | head -14
echo "elapsed $(( $(date +%s) - S )) s"
