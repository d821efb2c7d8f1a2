#!/usr/bin/env bash
# The FFT path's GPU run (branch fft-path, issue 49): run from the repository root on the H200
# with a prebuilt CUDA build folder carried (default build-cuda; BUILD=... to change, or TESTS=...
# and PERF=... naming the two binaries), logs and JSON into $OUT. Needs the targets
# ndconv_gpu_tests and ndconv-perf of that build.
#   1. the FFT suite of the GPU tests (CudaFft.*), then under compute-sanitizer memcheck and
#      racecheck where the sanitizer is installed (the forced-FFT and NaN cases);
#   2. the dense suites that the automatic choice could touch (CudaDense*, CudaBufferCaches*,
#      CudaDevice*) to see that nothing else changed;
#   3. the bench's fft rows (direct vs FFT vs auto for 11^3, 15^3, 21^3 on 256^3 float, per-voxel
#      accuracy on uniform and dark data, the measured cost-model constants) and dense3d_11 with
#      --quick as the direct kernels' reference in the same run.
# The binaries load cuFFT (libcufft.so.12) from the machine's CUDA toolkit (the image has one; a
# bundle need not carry the library's 280 MB).
set -u
export LD_LIBRARY_PATH="/usr/local/cuda/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
BUILD=${BUILD:-build-cuda}
OUT=${OUT:-out}
mkdir -p "$OUT"
# Or the two binaries alone (stripped, about 28 MB; the whole build folder is over the carry limit).
tests=${TESTS:-$BUILD/tests/gpu/ndconv_gpu_tests}
perf=${PERF:-$BUILD/src/perf/ndconv-perf}
status=0
{
  date -u
  git rev-parse HEAD 2>/dev/null
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1
  nvcc --version 2>/dev/null | tail -2
} > "$OUT/machine.txt"

# note NAME RC: one line of the summary; any failure makes the script's status 1.
note() {
  echo "$1: rc=$2" >> "$OUT/summary.txt"
  [ "$2" -eq 0 ] || status=1
}

timeout 300 "$tests" --gtest_filter='CudaFft.*' > "$OUT/fft-gpu-tests.log" 2>&1
note "fft tests" $?

if command -v compute-sanitizer > /dev/null 2>&1; then
  for tool in memcheck racecheck; do
    timeout 240 compute-sanitizer --tool "$tool" --error-exitcode 9 "$tests" \
      --gtest_filter='CudaFft.ForcedFftMatchesTheReferenceForEveryRequest:CudaFft.NanAndInf*' \
      > "$OUT/fft-$tool.log" 2>&1
    note "fft $tool" $?
  done
fi

timeout 400 "$tests" --gtest_filter='*CudaDense*:*CudaBufferCaches*:*CudaDevice*' \
  > "$OUT/dense-gpu-tests.log" 2>&1
note "dense tests" $?

timeout 500 "$perf" bench --workload fft3d_11,fft3d_15,fft3d_21,dense3d_11 --quick \
  --json "$OUT/fft-bench.json" > "$OUT/fft-bench.log" 2>&1
note "bench" $?
cat "$OUT/summary.txt"
tail -n 20 "$OUT/fft-bench.log"
exit $status
