#!/usr/bin/env bash
# GPU run 9 (one H200): the FFT suite after its tests were made quick (the host's float64
# reference only on small volumes, the direct kernels as the reference of the large filters) and
# the cost model's constants set from run 8; memcheck over the suite; the bench's fft rows again.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
timeout 150 ./bin/ndconv_gpu_tests --gtest_filter='CudaFft.*' 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED) |Failure|Expected|Actual|Which is" | head -30
echo "fft tests at $(( $(date +%s) - t0 )) s"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/ndconv_gpu_tests --gtest_brief=1 \
  --gtest_filter='CudaFft.*:-CudaFft.PerVoxel*' > /tmp/memcheck.txt 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" /tmp/memcheck.txt | tail -3
echo "at $(( $(date +%s) - t0 )) s"
timeout 120 ./bin/ndconv-perf bench --workload fft3d_11,fft3d_15,fft3d_21,dense3d_11 --quick --json $OUT/fft-bench.json 2>&1 | tail -14
echo "done at $(( $(date +%s) - t0 )) s"
