#!/usr/bin/env bash
# GPU run 42 (one H200): the merged tree of the fifth session (01ca0fc: the probe that starts no
# device, ndconv serve, the tc-bank branch's paired tail chunks): the whole GPU suite in 8 shards,
# then memcheck and racecheck over the tensor banks' and dense tensor-core sanitizer shapes.
set -uo pipefail
cd "$(dirname "$0")"
rm -rf bin && tar xJf final-bin-42.tar.xz
L=${OUT:-/tmp}; t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 200 bin/ndconv_gpu_tests > /tmp/shard$i.log 2>&1 & done; wait
for i in 0 1 2 3 4 5 6 7; do grep -E "^\[  PASSED  \]|^\[  FAILED  \]" /tmp/shard$i.log | head -2; grep -A4 "Failure" /tmp/shard$i.log | head -8; done; el suite
SAN="GpuWgmmaBank.SmallShapesForTheSanitizers:GpuTensorDense.SmallShapesForTheSanitizers"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$SAN" > /tmp/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" /tmp/memcheck.log | head -2; el memcheck
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$SAN" > /tmp/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY" /tmp/racecheck.log | head -2; el racecheck
tar czf $L/logs.tgz -C /tmp shard0.log shard1.log shard2.log shard3.log shard4.log shard5.log shard6.log shard7.log memcheck.log racecheck.log
