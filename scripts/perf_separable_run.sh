#!/usr/bin/env bash
# One device run for the separable kernels (GPU machine, no ITK): build with the tests, run the
# GPU suite, record the column kernel's resources, then time the Gaussian row of the bench with each
# separable plan in the same run (the column plan and the tiled-x plan it replaced) and
# profile the column kernels' memory throughput with Nsight Compute. Logs land in OUTDIR.
#
# usage: [FULL_BENCH=1] [MODES="columns tiled-x"] [NCU_MODE=mode] \
#          scripts/perf_separable_run.sh OUTDIR [workload]   (default: gauss3d_s2)
#        FULL_BENCH=1 also runs the whole bench (every row, every boundary) once; MODES are the
#        NDCONV_CUDA_SEPARABLE values timed in turn (two rounds), each optionally followed by
#        ",NAME=value" settings (e.g. columns,NDCONV_CUDA_COLUMN_GRID=full); NCU_MODE the one profiled;
#        SKIP_HOST=1 leaves out the host emulation suite (CI runs it); SKIP_NCU=1 the profile;
#        GPU_FILTER a gtest filter for the GPU suite (default: all of it);
#        RACECHECK=1 runs compute-sanitizer racecheck and memcheck on the column forms' GPU tests.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUTDIR [workload]}
workload=${2:-gauss3d_s2}
mkdir -p "$out"
exec > >(tee -a "$out/separable.log") 2>&1

echo "== build $(date -u)"
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_WITH_ITK=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null || exit 1
cmake --build build-dev -j16 2>&1 | grep -E "error|warning|FAILED" | head -40
cmake --build build-dev -j16 >/dev/null || exit 1
perf=build-dev/src/perf/ndconv-perf

echo "== resources $(date -u)"
obj=$(find build-dev -name 'launch.cu.o' | head -1)
cuobjdump --dump-resource-usage "$obj" 2>&1 | grep -E "Function|REG" |
  sed -E 's/_ZN6ndconv7kernels//' | paste - - | grep column | awk '{print $2, $4, $5, $6, $7, $8}'

echo "== GPU suites $(date -u)"
[[ -n ${SKIP_HOST:-} ]] || build-dev/tests/gpu/ndconv_gpu_host_tests --gtest_brief=1 2>&1 | tail -2
build-dev/tests/gpu/ndconv_gpu_tests --gtest_brief=1 --gtest_filter="${GPU_FILTER:-*}" \
  >"$out/gpu_tests.log" 2>&1
echo "ndconv_gpu_tests rc=$?"
tail -3 "$out/gpu_tests.log"

echo "== bench $workload $(date -u)"
for run in 1 2; do
  for mode in ${MODES:-columns tiled-x}; do
    # A mode: an NDCONV_CUDA_SEPARABLE value, then optionally ",NAME=value" more variables.
    IFS=, read -ra parts <<<"$mode"
    echo "-- NDCONV_CUDA_SEPARABLE=${parts[0]} ${parts[*]:1} (round $run)"
    env NDCONV_CUDA_SEPARABLE="${parts[0]}" "${parts[@]:1}" "$perf" bench --quick --reps 20 \
      --workload "$workload" --json "$out/bench-$run-${mode//[^a-zA-Z0-9-]/_}.json" 2>&1 |
      grep -E "$workload|device:|copy|FMA peak|rror"
  done
done

if [[ -n ${RACECHECK:-} ]]; then
  echo "== racecheck, column forms $(date -u)"
  timeout 240 compute-sanitizer --tool racecheck build-dev/tests/gpu/ndconv_gpu_tests \
    --gtest_filter='CudaSeparableLarge.*:AllKo/CudaSeparable.MatchesReference/0:AllKo/CudaSeparable.MatchesReference/6:AllKo/CudaSeparable.MatchesReference/12:AllKo/CudaSeparable.MatchesReference/18:AllKo/CudaSeparable.MatchesReference/22:AllKo/CudaSeparable.MatchesReference/28' --gtest_brief=1 \
    >"$out/racecheck.log" 2>&1
  echo "racecheck rc=$?"
  tail -4 "$out/racecheck.log"
  timeout 240 compute-sanitizer --tool memcheck build-dev/tests/gpu/ndconv_gpu_tests \
    --gtest_filter='CudaSeparableLarge.*:AllKo/CudaSeparable.MatchesReference/*' --gtest_brief=1 \
    >>"$out/racecheck.log" 2>&1
  echo "memcheck rc=$?"
  tail -4 "$out/racecheck.log"
fi
[[ -n ${SKIP_NCU:-} ]] || {
echo "== ncu column kernels $(date -u)"
NDCONV_CUDA_SEPARABLE=${NCU_MODE:-} timeout 200 ncu --clock-control none -k "regex:column_kernel" -c 4 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section InstructionStats \
  "$perf" bench --workload "$workload" --quick --reps 1 >"$out/ncu.txt" 2>&1
grep -E "column_kernel|Duration|DRAM Throughput|Memory Throughput|Issue Slots Busy|Achieved Occupancy|Registers Per|No Eligible|Eligible Warps" "$out/ncu.txt" | head -60
}
if [[ -n ${FULL_BENCH:-} ]]; then
  echo "== full bench $(date -u)"
  "$perf" bench --reps 20 --json "$out/bench-full.json" 2>&1 | tail -12
fi
(cd "$out" && tar czf bench.tgz bench-*.json && rm -f bench-*.json)
echo "== done $(date -u)"
