#!/usr/bin/env bash
# GPU run (one H200): the merged tree of the fourth session (wgmma-ws, dense-tc, cpu-xeon,
# amx-tiles): the whole GPU suite in 8 shards, the sanitizers over the new kernels' small tests,
# the issue-49 bench rows (GPU, then the CPU rows on the host alone).
set -uo pipefail
cd "$(dirname "$0")"
rm -rf bin && tar xJf final-bin.tar.xz
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
L=${OUT:-/tmp}/logs; mkdir -p $L; t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 220 bin/ndconv_gpu_tests > $L/shard$i.log 2>&1 & done; wait
for i in 0 1 2 3 4 5 6 7; do grep -E "^\[  PASSED  \]|^\[  FAILED  \]|^\[==========\]" $L/shard$i.log | head -6; grep -B2 -A6 "Failure" $L/shard$i.log | head -12; tail -1 $L/shard$i.log; done; el suite
SAN="GpuWgmmaBank.SmallShapesForTheSanitizers:GpuTensorDense.SmallShapesForTheSanitizers"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$SAN" > $L/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $L/memcheck.log | head -3; el memcheck
timeout 90 compute-sanitizer --tool racecheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$SAN" > $L/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $L/racecheck.log | head -3; el racecheck
timeout 150 bin/ndconv-perf bench --workload bank_3d_tc,bank_4d_tc,dense3d_7_tc,dense3d_11_tc,dense3d_11,adaptive_4d,gauss3d_s2,median3d_r1 --quick --json $L/bench.json > $L/bench.log 2>&1; echo "bench rc=$?"; grep -vE "^\[|^measuring|^  FFT" $L/bench.log | cut -c1-230 | tail -24; el bench
timeout 90 bin/ndconv-perf bench --device cpu --workload cpu3d_7,cpu_bank_3d,cpu_bank_3d_u8 --call-reps 7 --json $L/bench-cpu.json > $L/bench-cpu.log 2>&1; echo "cpu bench rc=$?"; grep -vE "^\[|^measuring" $L/bench-cpu.log | cut -c1-230 | tail -10; el cpu-bench
timeout 60 bin/ndconv_engine_tests --gtest_filter='CpuInt8Bank.*:ParallelFor*:CpuDense*' > $L/engine.log 2>&1; echo "engine tests rc=$?"; grep -E "^\[  PASSED  \]|^\[  FAILED  \]|^\[==========\]" $L/engine.log | head -4; grep -B2 -A6 "Failure" $L/engine.log | head -12; el engine-tests
(cd ${OUT:-/tmp} && tar czf logs.tgz logs && rm -rf logs)
