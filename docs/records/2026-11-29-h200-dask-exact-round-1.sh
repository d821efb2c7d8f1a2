#!/usr/bin/env bash
# dask-exact round 1: the slab kernel now filters x before y (every GPU plan of a separable filter
# gives the same bits). Checks: the new GPU test forcing each plan through the policy, the slab
# and separable suites, memcheck/racecheck of the slab kernel, the two Gaussian bench rows, and
# the slab sweep of this branch against main's (same run, A/B).
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-${OUT:-/tmp}/dask-exact}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 40 "$D/bin/ndconv_gpu_tests" --gtest_filter='CudaSeparableBits.*:CudaSlab.*' > "$L/tests.log" 2>&1; echo "tests rc=$?"
grep -E "^\[  PASSED  \]|^\[  FAILED  \]|^\[       OK \]" "$L/tests.log" | head -12; grep -A8 "Failure" "$L/tests.log" | head -24; el tests
timeout 20 compute-sanitizer --tool memcheck --error-exitcode 9 "$D/bin/ndconv_gpu_tests" --gtest_filter='CudaSlab.NanStaysInsideTheFootprint' > "$L/memcheck.log" 2>&1; echo "memcheck rc=$?"; tail -1 "$L/memcheck.log"; el memcheck
timeout 25 compute-sanitizer --tool racecheck --error-exitcode 9 "$D/bin/ndconv_gpu_tests" --gtest_filter='CudaSlab.NanStaysInsideTheFootprint' > "$L/racecheck.log" 2>&1; echo "racecheck rc=$?"; tail -1 "$L/racecheck.log"; el racecheck
timeout 30 "$D/bin/ndconv-perf" bench --workload gauss3d_s2,gauss3d_s2_272 --quick --json "$L/bench.json" > "$L/bench.log" 2>&1; echo "bench rc=$?"
grep -vE "^\[" "$L/bench.log" | cut -c1-240 | tail -12; el bench
for v in main branch; do
  b="$D/bin/slab_sweep_$v"; [ -x "$b" ] || continue
  timeout 15 "$b" > "$L/sweep_$v.log" 2>&1; echo "sweep $v rc=$?"; cut -c1-120 "$L/sweep_$v.log" | head -14
done; el sweeps
