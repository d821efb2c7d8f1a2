#!/usr/bin/env bash
# One device run for the CUDA kernels (GPU machine, no ITK): build everything with the tests, run
# the GPU suites, record the kernels' resources, time the bench (with the separable kernels of
# before the tiled passes for comparison in the same run), and with `final` also the sanitizers
# and the study sweep + bench + peers of scripts/perf_device_run.sh. Logs land in OUTDIR (at most
# 8 files: the device tool returns no more).
#
# usage: scripts/perf_cuda_run.sh OUTDIR [final]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUTDIR [final]}
mode=${2:-}
mkdir -p "$out"
log="$out/kernels.log"
exec > >(tee -a "$log") 2>&1
export PYTHONUNBUFFERED=1

echo "== build $(date -u)"
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_WITH_ITK=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null || exit 1
cmake --build build-dev -j16 2>&1 | grep -E "error|warning|FAILED" | head -40
cmake --build build-dev -j16 >/dev/null || exit 1
perf=build-dev/src/perf/ndconv-perf
tests=build-dev/tests/gpu/ndconv_gpu_tests

echo "== resources $(date -u)"
obj=$(find build-dev -name 'launch.cu.o' | head -1)
cuobjdump --dump-resource-usage "$obj" 2>&1 | grep -E "Function|REG" |
  sed -E 's/_ZN6ndconv7kernels//' | paste - - | awk '{print $2, $4, $5, $6, $7, $8}' | head -40

echo "== GPU suites $(date -u)"
build-dev/tests/gpu/ndconv_gpu_host_tests --gtest_brief=1 2>&1 | tail -3
"$tests" --gtest_brief=1 >"$out/gpu_tests.log" 2>&1
echo "ndconv_gpu_tests rc=$?"
tail -3 "$out/gpu_tests.log"

echo "== bench $(date -u)"
"$perf" bench --json "$out/bench.json"
for k in blocked tiled fused; do
  echo "== gauss3d_s2 with NDCONV_CUDA_SEPARABLE=$k"
  NDCONV_CUDA_SEPARABLE=$k "$perf" bench --quick --workload gauss3d_s2 2>&1 | grep -E "gauss3d|device:"
done
echo "== gauss3d_s2 with the fused kernel's 32x16 shape (NDCONV_CUDA_FUSED_ROWS=16)"
NDCONV_CUDA_SEPARABLE=fused NDCONV_CUDA_FUSED_ROWS=16 "$perf" bench --quick --workload gauss3d_s2 2>&1 | grep -E "gauss3d|device:"

if [[ $mode == final ]]; then
  echo "== compute-sanitizer $(date -u)"
  {
    compute-sanitizer --tool memcheck "$tests" \
      --gtest_filter='AllKo/CudaSeparable.MatchesReference/*:CudaDense.*:AllKo/CudaDense.MatchesReference/1*:CudaDenseLarge.*' \
      --gtest_brief=1 2>&1 | tail -4
    compute-sanitizer --tool racecheck "$tests" \
      --gtest_filter='CudaDense.Nan*:AllKo/CudaDense.MatchesReference/6:AllKo/CudaDense.MatchesReference/100:AllKo/CudaDense.MatchesReference/102:AllKo/CudaSeparable.MatchesReference/6:AllKo/CudaSeparable.MatchesReference/96:AllKo/CudaSeparable.MatchesReference/101:AllKo/CudaSeparable.MatchesReference/102' \
      --gtest_brief=1 2>&1 | tail -4
    # The fused separable kernel: cp.async pipeline, two barriers per plane, per-thread rings.
    compute-sanitizer --tool racecheck "$tests" \
      --gtest_filter='Shapes/CudaFused.*/2:Shapes/CudaFused.*/5:Shapes/CudaFused.*/9:CudaFusedLarge.*' \
      --gtest_brief=1 2>&1 | tail -4
    compute-sanitizer --tool memcheck "$tests" --gtest_filter='*CudaFused*' --gtest_brief=1 2>&1 |
      tail -4
  } >"$out/sanitizer.log" 2>&1
  cat "$out/sanitizer.log"
  echo "== study sweep, bench and peers $(date -u)"
  bash scripts/perf_device_run.sh "$out/study" "$perf" "${STUDY_TIMEOUT:-240}" >/dev/null 2>&1
  tail -30 "$out/study/log.txt"
  # The device tool returns files at most two folders down and eight in all: combine.
  (cd "$out/study" && tar czf ../study.tgz env.txt quick.csv sweep.csv sweep.json blockshapes.csv \
    blockshapes.json bench.json \
    peers.json log.txt)
  rm -rf "$out/study"
fi
echo "== done $(date -u)"
