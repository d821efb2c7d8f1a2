#!/usr/bin/env bash
# gauss-stream round 1: dev/stream_sweep (the streaming kernel's product shape bit for bit against
# three naive passes on 100x70x50, 12x7x5, 40x33x90 under every boundary, one chunk and chunks;
# then shapes on 256^3 timed against the memory floor); then, where present, the product's GPU
# tests (CudaStream*, CudaSlab.LargeVolumesDenseAndStrided) and the bench's gauss rows.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/gauss-stream}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== sweep"
timeout 20 "$D/stream_sweep" > "$L/sweep.log" 2>&1; echo "rc=$?"
grep -c "OK$" "$L/sweep.log" | sed 's/^/checks OK: /'; grep -E "FAIL|failures|halo unfit|encode" "$L/sweep.log" | head -8
grep -E "copy bandwidth|floor;" "$L/sweep.log" | cut -c1-150; el sweep
if [ -x "$D/ndconv_gpu_tests" ]; then
  echo "=== gpu tests"
  timeout 30 "$D/ndconv_gpu_tests" --gtest_filter='CudaStream*:CudaSlab.LargeVolumesDenseAndStrided' > "$L/tests.log" 2>&1; echo "rc=$?"
  grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure' -A3 "$L/tests.log" | cut -c1-160 | head -30; el tests
fi
if [ -x "$D/ndconv-perf" ]; then
  echo "=== bench"
  timeout 25 "$D/ndconv-perf" bench --workload gauss3d_s2,gauss3d_s2_272 --quick > "$L/bench.log" 2>&1; echo "rc=$?"
  grep -E "^gauss|stream|other" "$L/bench.log" | cut -c1-200 | head -12; el bench
fi
