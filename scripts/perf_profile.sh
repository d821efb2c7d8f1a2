#!/usr/bin/env bash
# Nsight Compute on the bench's kernels (what bounds them: FMA pipe, memory, latency, issue), plus
# a second bench + peers run to show run-to-run spread. For docs/performance.md.
#
# usage: scripts/perf_profile.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUTDIR}
mkdir -p "$out"
exec > >(tee -a "$out/profile-log.txt") 2>&1
export PYTHONUNBUFFERED=1
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_WITH_ITK=OFF \
  -DNDCONV_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null || exit 1
cmake --build build-dev -j16 --target ndconv-perf >/dev/null || exit 1
bin=build-dev/src/perf/ndconv-perf
sections=(--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats
  --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis
  --section InstructionStats)
# The sweep launches the rule's KO (16 here) first, then each listed KO: -c 2 profiles KO 16, KO 8.
profile() {  # name, kernel regex, count, command...
  local name=$1 regex=$2 count=$3
  shift 3
  echo "== ncu $name"
  timeout 120 ncu --clock-control none "${sections[@]}" -k "regex:$regex" -c "$count" "$@" \
    >"$out/ncu-$name.txt" 2>&1
  echo "rc=$? ($(grep -c 'Section: GPU Speed Of Light' "$out/ncu-$name.txt") kernels)"
}
sweep_args=(--reps 1 --warmup 0 --csv /tmp/p.csv --json /tmp/p.json --force)
profile dense3d_11 blocked 2 "$bin" sweep --volumes 256x256x256 --filters 11 --ko 8 "${sweep_args[@]}"
profile dense3d_5 blocked 2 "$bin" sweep --volumes 256x256x256 --filters 5 --ko 8 "${sweep_args[@]}"
profile dense2d_17 blocked 1 "$bin" sweep --volumes 4096x4096 --filters 17 --ko 16 "${sweep_args[@]}"
profile gauss3d_s2 'row|blocked' 3 "$bin" bench --workload gauss3d_s2 --quick --reps 1
for f in "$out"/ncu-*.txt; do
  echo "== $f"
  grep -E "blocked_kernel|row_kernel|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|Executed Ipc Active|L1/TEX Hit|L2 Hit|No Eligible|Warp Cycles Per Issued" "$f" | head -60
done
echo "== second bench + peers (run-to-run spread)"
python3 scripts/peers.py --ndconv "$bin" --out "$out/peers-2.json" --bench-json /tmp/bench-2.json
