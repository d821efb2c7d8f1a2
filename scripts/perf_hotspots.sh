#!/usr/bin/env bash
# Where the instructions of the dense kernels go (GPU machine, no ITK): the SASS of every compiled
# kernel, and for the bench's dense rows one Nsight Compute profile each with the per-instruction
# execution counts (SourceCounters), exported as CSV, plus the summary sections. Used to decide
# what to change in kernels/ before timing it (docs/performance.md); scripts/ncu_source_summary.py
# summarises the CSV (opcodes, basic blocks, stall reasons).
#
# usage: [KERNEL_REGEX=re] [KERNEL_COUNT=n] scripts/perf_hotspots.sh OUTDIR [workload...]
#        (default: the tiled kernel on dense3d_11 dense3d_5 dense2d_17)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUTDIR [workload...]}
shift
workloads=("$@")
[[ ${#workloads[@]} -gt 0 ]] || workloads=(dense3d_11 dense3d_5 dense2d_17)
mkdir -p "$out"
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_WITH_ITK=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null || exit 1
cmake --build build-dev -j16 --target ndconv-perf >/dev/null || exit 1
bin=build-dev/src/perf/ndconv-perf
obj=$(find build-dev -name 'launch.cu.o' | head -1)
cuobjdump -sass "$obj" >"$out/launch.sass" 2>&1
cuobjdump --dump-resource-usage "$obj" 2>&1 | grep -E "Function|REG" >"$out/resources.txt"
for w in "${workloads[@]}"; do
  timeout 150 ncu --clock-control none -k "regex:${KERNEL_REGEX:-tiled_kernel}" -c "${KERNEL_COUNT:-1}" \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --section SourceCounters -o "$out/$w" -f \
    "$bin" bench --workload "$w" --quick --reps 1 >"$out/$w-run.txt" 2>&1
  ncu -i "$out/$w.ncu-rep" --print-details all >"$out/$w-details.txt" 2>&1
  ncu -i "$out/$w.ncu-rep" --page source --csv --print-source sass >"$out/$w-source.csv" 2>&1
  rm -f "$out/$w.ncu-rep"
  echo "== $w: $(grep -E 'Duration|Issue Slots Busy' "$out/$w-details.txt" | tr -s ' ' | head -2 | paste -sd ' ')"
done
ls -la "$out"
