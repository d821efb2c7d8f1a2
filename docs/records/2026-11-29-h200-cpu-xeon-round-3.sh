#!/usr/bin/env bash
# cpu-xeon round 3 (if device time is left): the branch's final CPU rows against main's binary,
# interleaved, 16 threads; the host's steal time over the run; the probe's ring splits and the
# bank's chunk sizes.
D=$(dirname "$0"); L=${L:-$OUT/cpu-xeon}; mkdir -p "$L"; S=$(date +%s)
steal() { awk '/^cpu /{print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
read s0 t0 < <(steal)
echo "$(nproc) cpus; $(uptime)"
row() {
  timeout 60 "$D/$1" bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 9 --threads 16 --json "$L/bench-$2.json" > "$L/bench-$2.txt" 2>&1
  echo "$2 rc $?: $(grep -E '^cpu' "$L/bench-$2.txt" | awk '{print $1, $2, $3, $6}' | tr '\n' ';')"
}
echo "== bench rows, 16 threads: branch (b) and main (m) interleaved"
for i in 1 2 3 4; do row ndconv-perf b$i; row ndconv-perf-main m$i; done
read s1 t1 < <(steal); echo "steal over the bench: $((s1 - s0)) of $((t1 - t0)) jiffies (all CPUs)"
echo "== probe: dense, 16 threads (median/min ms)"
timeout 60 "$D/cpu_rows_probe" 16 dense > "$L/probe-dense.txt" 2>&1; echo "rc $?"
grep -E "rule" "$L/probe-dense.txt" | sed -E 's/^dense (T=..) rule +median ([0-9.]+) ms min ([0-9.]+).*columns of ([0-9]+), runs of ([0-9]+).*/\1 \2\/\3 c\4 r\5/' | tr '\n' ';'; echo
grep -E "^dense T=16" "$L/probe-dense.txt" | grep -v rule | sed -E 's/^dense T=16 (.*[^ ]) +median ([0-9.]+) ms min ([0-9.]+).*/\1: \2\/\3/' | tr '\n' ';' | fold -w 200; echo
grep -A1 -E "^timeline" "$L/probe-dense.txt" | cut -c1-400
echo "== probe: bank"
timeout 60 "$D/cpu_rows_probe" 16 bank > "$L/probe-bank.txt" 2>&1; grep -E "^bank" "$L/probe-bank.txt" | cut -c1-80
read s2 t2 < <(steal); echo "steal over the run: $((s2 - s0)) of $((t2 - t0)) jiffies"
echo "elapsed $(( $(date +%s) - S )) s"
