#!/usr/bin/env bash
# GPU run 27 (one H200): run 26's merged tree with the resident stages' memory check fixed (the
# tensor cores' reconstruction buffers reserved only where they fit beside the stages): the test
# that run 26 failed, then the quarter of the suite that run 26's shard 3 did not reach (shards 3
# and 7 of 8 are exactly shard 3 of 4), in parallel.
set -uo pipefail
cd "$(dirname "$0")" && tar xJf r27.tar.xz
L=${OUT:-/tmp}; t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
timeout 30 r27/ndconv_gpu_tests --gtest_filter='GpuBank.Adaptive*' > $L/gpubank.log 2>&1; echo "GpuBank.Adaptive* rc=$?"; grep -E "^\[  (PASSED|FAILED) |Failure" -A3 $L/gpubank.log | head -12; el gpubank
for i in 3 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 210 r27/ndconv_gpu_tests > $L/shard8-$i.log 2>&1 & done; wait
for i in 3 7; do grep -E "^\[==========\]|^\[  PASSED  \]|^\[  FAILED  \]" $L/shard8-$i.log | head -6; grep -B2 -A6 "Failure" $L/shard8-$i.log | head -16; tail -2 $L/shard8-$i.log; done; el suite
