#!/usr/bin/env bash
# What must run on a GPU before a change to the CUDA backend lands (docs/gpu-validation.md), in
# one batch on a machine with a CUDA toolkit and no ITK: build the ITK-free targets, run the GPU
# suites, compute-sanitizer memcheck and racecheck on the default kernels, then the bench.
#
# usage: scripts/gpu_validate.sh OUTDIR [REFERENCE_NDCONV_PERF]
#   OUTDIR receives env.txt, build.txt, gpu_tests.txt, memcheck.txt, racecheck.txt, bench.json,
#   bench.txt and a summary in log.txt.
#   REFERENCE_NDCONV_PERF: an ndconv-perf built from an earlier commit; when given, its bench runs
#   in the same session, interleaved with this tree's, so that before/after compare on one clock.
# Environment: JOBS (build jobs, default all cores), BENCH_ROUNDS (default 2), DEPS_PREFIX,
#   SANITIZE_FILTER (gtest filter of the tests run under compute-sanitizer).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUTDIR [REFERENCE_NDCONV_PERF]}
reference=${2:-}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
export PATH=/usr/local/cuda/bin:$PATH
jobs=${JOBS:-$(nproc)}
build=build-gpu
status=0

{
  date -u
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
    --format=csv
  nvcc --version | tail -2
  git log -1 --format='commit %H %s' 2>/dev/null || true
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

echo "== build ($jobs jobs)"
start=$(date +%s)
# DEPS_PREFIX: where CMake finds header-only dependencies the machine lacks (nlohmann-json).
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_WITH_ITK=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 ${DEPS_PREFIX:+-DCMAKE_PREFIX_PATH="$DEPS_PREFIX"} \
  >"$out/build.txt" 2>&1 &&
  cmake --build "$build" -j "$jobs" >>"$out/build.txt" 2>&1 ||
  { tail -40 "$out/build.txt"; exit 1; }
echo "built in $(($(date +%s) - start)) s"
perf=$build/src/perf/ndconv-perf

echo "== GPU suites"
for t in "$build"/tests/gpu/ndconv_gpu_tests "$build"/tests/gpu/ndconv_gpu_host_tests \
  "$build"/tests/engine/ndconv_engine_tests; do
  [[ -x $t ]] || continue
  "$t" --gtest_brief=1 >>"$out/gpu_tests.txt" 2>&1
  rc=$?
  echo "$(basename "$t"): rc=$rc"
  grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/gpu_tests.txt" | tail -3
  ((rc == 0)) || status=1
done

echo "== compute-sanitizer (memcheck, racecheck) on the default kernels"
filter=${SANITIZE_FILTER:-CudaDense.Halo*:CudaDense.TiledBulk*:CudaSeparableLarge.*:CudaPipeline.*:CudaStoredTypes*:CudaDeviceEntryPoints*:GpuBank*:GpuAdaptiveResident*:FiltersGpu*}
for tool in memcheck racecheck; do
  compute-sanitizer --tool "$tool" --error-exitcode 9 \
    "$build"/tests/gpu/ndconv_gpu_tests --gtest_brief=1 --gtest_filter="$filter" \
    >"$out/$tool.txt" 2>&1
  rc=$?
  echo "$tool: rc=$rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/$tool.txt" | tail -1)"
  ((rc == 0)) || status=1
done

echo "== bench"
rounds=${BENCH_ROUNDS:-2}
for ((r = 1; r <= rounds; ++r)); do
  w=dense3d_11,dense3d_5,dense4d_7,dense2d_17,gauss3d_s2
  if [[ -n $reference ]]; then
    "$reference" bench --workload "$w" --json "$out/bench-reference-$r.json" --force >"$out/bench-reference-$r.txt" 2>&1
    echo "reference round $r:"
    grep -E '^(dense|gauss|cpu)' "$out/bench-reference-$r.txt"
  fi
  "$perf" bench --workload "$w" --json "$out/bench-$r.json" --force >"$out/bench-$r.txt" 2>&1
  echo "this tree round $r:"
  grep -E '^(device:|dense|gauss|cpu)' "$out/bench-$r.txt"
done
echo "gpu_validate: status $status"
exit $status
