#!/usr/bin/env bash
# GPU run 11 (one H200): cuFFT loaded on first use (dlopen) rather than linked: the FFT suite, the
# dense suites the automatic choice touches, and one fft bench row.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s)
ldd ./bin/ndconv_gpu_tests | grep -c cufft
timeout 120 ./bin/ndconv_gpu_tests --gtest_brief=1 --gtest_filter='CudaFft.*:*CudaDense*:*CudaBufferCaches*' 2>&1 | grep -E "^\[  (PASSED|FAILED) |FAILED|tests from" | tail -6
echo "at $(( $(date +%s) - t0 )) s"
timeout 60 ./bin/ndconv-perf bench --workload fft3d_21 --quick 2>&1 | grep -A2 "^fft3d_21"
echo "done at $(( $(date +%s) - t0 )) s"
