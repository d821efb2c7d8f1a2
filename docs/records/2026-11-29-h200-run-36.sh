#!/usr/bin/env bash
# GPU run 36 (one H200): the slab and streaming kernels' reference tests on their shared helper.
set -uo pipefail
cd "$(dirname "$0")" && rm -rf bin && tar xJf t36.tar.xz
timeout 150 bin/ndconv_gpu_tests --gtest_filter='CudaSlab.MatchesReference*:CudaStream.MatchesReference*' > ${OUT:-/tmp}/t36.log 2>&1; echo "rc=$?"
grep -E "^\[ +(OK|FAILED) |^\[  PASSED|^\[  FAILED" ${OUT:-/tmp}/t36.log; grep -A6 Failure ${OUT:-/tmp}/t36.log | head -12
