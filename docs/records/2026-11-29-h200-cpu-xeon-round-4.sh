#!/usr/bin/env bash
# cpu-xeon round 4 (final state of the branch): the CPU product tests on the Xeon (dense, rings,
# parallel_for with parked workers, bank, progress), then the CPU rows against main's binary,
# interleaved, 16 threads, and the dense call's timeline.
D=$(dirname "$0"); L=${L:-$OUT/cpu-xeon}; mkdir -p "$L"; S=$(date +%s)
steal() { awk '/^cpu /{print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
read s0 t0 < <(steal)
echo "$(nproc) cpus; $(uptime)"
echo "== product tests (CPU)"
timeout 60 "$D/ndconv_engine_tests" --gtest_filter='*CpuDense*:*ParallelFor*:*CpuBank*:Progress.*:*CpuNonFinite*' > "$L/tests.txt" 2>&1
echo "rc $? after $(( $(date +%s) - S )) s: $(grep -E '^\[  (PASSED|FAILED)|FAILED  \]' "$L/tests.txt" | tr '\n' ' ')"
row() {
  timeout 30 "$D/$1" bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 9 --threads 16 --json "$L/bench-$2.json" > "$L/bench-$2.txt" 2>&1
  echo "$2 rc $?: $(grep -E '^cpu' "$L/bench-$2.txt" | awk '{print $1, $2, $3, $6}' | tr '\n' ';')"
}
echo "== bench rows, 16 threads: branch (b) and main (m) interleaved"
for i in 1 2 3 4 5; do row ndconv-perf b$i; row ndconv-perf-main m$i; [ $(( $(date +%s) - S )) -gt 45 ] && break; done
read s1 t1 < <(steal); echo "steal: $((s1 - s0)) of $((t1 - t0)) jiffies (all CPUs)"
echo "== the dense call's timeline (probe)"
timeout 20 "$D/cpu_rows_probe" 16 dense > "$L/probe-dense.txt" 2>&1; echo "rc $?"
grep -A1 -E "^timeline T=16" "$L/probe-dense.txt" | cut -c1-300
echo "elapsed $(( $(date +%s) - S )) s"
