#!/usr/bin/env bash
# gauss-stream round 2: dev/stream_sweep (the streaming kernel now compiled once per plane with the
# ring step dispatched on p mod K: the product shape bit for bit against three naive passes on
# 100x70x50, 12x7x5, 40x33x90 under every boundary, one chunk and chunks; then shapes on 256^3
# timed against the memory floor); the product's GPU tests (CudaStream*: float64 reference, every
# plan the same bits; CudaSlab.LargeVolumesDenseAndStrided); the bench's gauss rows and the whole
# call.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/gauss-stream}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== sweep"
timeout 20 "$D/stream_sweep" > "$L/sweep.log" 2>&1; echo "rc=$?"
grep -c "OK$" "$L/sweep.log" | sed 's/^/checks OK: /'; grep -E "FAIL|failures|halo unfit|encode" "$L/sweep.log" | head -8
grep -E "copy bandwidth|floor;" "$L/sweep.log" | cut -c1-150; el sweep
echo "=== gpu tests"
timeout 30 "$D/ndconv_gpu_tests" --gtest_filter='CudaStream*:CudaSlab.LargeVolumesDenseAndStrided' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure' -A3 "$L/tests.log" | cut -c1-160 | head -24; el tests
echo "=== bench"
timeout 25 "$D/ndconv-perf" bench --workload gauss3d_s2,gauss3d_s2_272,api_gauss3d_s2 --quick > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^gauss|^api|instead" "$L/bench.log" | cut -c1-200 | head -12; el bench
