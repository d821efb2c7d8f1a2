#!/usr/bin/env bash
# Nsight Compute on the bench's GPU rows (GPU machine, no ITK): what bounds each kernel (FMA pipe,
# memory, latency, issue) and where its instructions go. For each workload: the summary sections
# (<workload>-details.txt) and the per-instruction counts of the SASS (<workload>-source.csv,
# summarised by scripts/ncu_source_summary.py); plus the compiled kernels' registers and spills
# (resources.txt). Builds ndconv-perf in build-dev/ unless NDCONV_PERF names a binary.
#
# usage: [KERNEL_REGEX=re] [KERNEL_COUNT=n] [NDCONV_PERF=binary] scripts/perf_profile.sh OUTDIR
#          [workload...]   (default: dense3d_11 dense3d_5 dense4d_7 dense2d_17 gauss3d_s2; the
#          kernels profiled: the first KERNEL_COUNT launches (1) whose demangled name matches
#          KERNEL_REGEX (default: the filter kernels, ndconv::kernels::), after the bench's
#          validation launch)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUTDIR [workload...]}
shift
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=(dense3d_11 dense3d_5 dense4d_7 dense2d_17 gauss3d_s2)
mkdir -p "$out"
bin=${NDCONV_PERF:-}
if [[ -z $bin ]]; then
  cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_WITH_ITK=OFF \
    -DNDCONV_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null || exit 1
  cmake --build build-dev -j"$(nproc)" --target ndconv-perf >/dev/null || exit 1
  bin=build-dev/src/perf/ndconv-perf
  find build-dev -name '*.cu.o' -exec cuobjdump --dump-resource-usage {} \; 2>/dev/null |
    grep -E "Function|REG" >"$out/resources.txt"
fi
for w in "${workloads[@]}"; do
  # -s 1: skip the validation launch that precedes the timed ones.
  timeout 300 ncu --clock-control none --kernel-name-base demangled \
    -k "regex:${KERNEL_REGEX:-ndconv::kernels::}" -s 1 \
    -c "${KERNEL_COUNT:-1}" --section SpeedOfLight --section LaunchStats --section Occupancy \
    --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section InstructionStats --section SourceCounters \
    -o "$out/$w" -f "$bin" bench --workload "$w" --quick --reps 1 >"$out/$w-run.txt" 2>&1
  ncu -i "$out/$w.ncu-rep" --print-details all >"$out/$w-details.txt" 2>&1
  ncu -i "$out/$w.ncu-rep" --page source --csv --print-source sass >"$out/$w-source.csv" 2>&1
  rm -f "$out/$w.ncu-rep"
  echo "== $w: $(grep -E 'Duration|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy' \
    "$out/$w-details.txt" | tr -s ' ' | head -4 | paste -sd ' ')"
done
ls -la "$out"
