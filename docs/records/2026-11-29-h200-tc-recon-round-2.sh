#!/bin/bash
# tc-recon round 2: the reconstruction's weighted sum on the tensor cores for the default 11^4
# (adaptive_4d's) and the echo preset's 9^4, tap rows in groups of 4 taps (11 or 9 taps: 3 groups,
# 46 / 31 chunks a frame), weights streamed a frame at a time, the sum in the epilogue; the narrow
# tiles' row table changed too (one entry per lane quarter), so their bit-for-bit test runs again.
# GPU tests, the bench (adaptive_4d, bank_4d_tc), the recon sweep (kernel-only timings of 5 block
# shapes, each checked bit for bit first), memcheck / racecheck on small shapes. Budget 120 s.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/tc-recon}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== gpu tests"
T="$D/ndconv_gpu_tests"
summary() { grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure|accuracy \]|adaptive \]' -A1 "$1" | grep -v '^--$' | grep -v '^\[ RUN' | cut -c1-180 | head -${2:-12}; }
timeout 13 "$T" --gtest_filter='GpuTensorCoreBank.TheAdaptiveFilterOn8BitInput*' > "$L/tests-adaptive.log" 2>&1; echo "rc=$?"; summary "$L/tests-adaptive.log" 6
timeout 16 "$T" --gtest_filter='GpuTensorCoreBank.TheWeightedSumEquals*:GpuTensorCoreBank.WeightedSum*' > "$L/tests-weighted.log" 2>&1; echo "rc=$?"; summary "$L/tests-weighted.log" 8
timeout 14 "$T" --gtest_filter='GpuTensorCoreBank.TheWeightedSumIsAsAccurate*:GpuTensorCoreBank.TheWeightedSumTakes*' > "$L/tests-accuracy.log" 2>&1; echo "rc=$?"; summary "$L/tests-accuracy.log" 14
timeout 12 "$T" --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*:GpuTensorCoreBank.SmallShapes*' > "$L/tests-narrow.log" 2>&1; echo "rc=$?"; summary "$L/tests-narrow.log" 6
el tests
echo "=== bench"
timeout 20 "$D/ndconv-perf" bench --workload bank_4d_tc,adaptive_4d --quick --json "$L/bench.json" > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^(bank_4d_tc|adaptive_4d)" "$L/bench.log" | cut -c1-200 | head -4
timeout 5 python3 - "$L/bench.json" <<'PY' 2>&1 | cut -c1-330 | head -8
import json, sys
def walk(j):
    if isinstance(j, dict):
        if "stages" in j: yield j
        for v in j.values(): yield from walk(v)
    elif isinstance(j, list):
        for v in j: yield from walk(v)
for r in walk(json.load(open(sys.argv[1]))):
    print("stages:", [(s["stage"], round(s["median_ms"], 1)) for s in r["stages"]])
    print("total_without_design_ms:", round(r.get("total_without_design_ms"), 1), "bank_kernels:", {k: round(v, 1) for k, v in r.get("bank_kernels", {}).items()})
    for n in r.get("notes", []): print("note:", n)
PY
el bench
echo "=== recon sweep"
timeout 18 "$D/tensor_bank_sweep" recon > "$L/sweep.log" 2>&1; echo "rc=$?"; cut -c1-170 "$L/sweep.log" | head -8; el sweep
echo "=== memcheck"
timeout 10 compute-sanitizer --tool memcheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorCoreBank.WeightedSumSmallShape*' > "$L/memcheck.log" 2>&1; echo "rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$L/memcheck.log" | head -3; el memcheck
echo "=== racecheck"
timeout 13 compute-sanitizer --tool racecheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorCoreBank.WeightedSumSmallShape*' > "$L/racecheck.log" 2>&1; echo "rc=$?"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$L/racecheck.log" | head -3; tail -c 600 "$L/racecheck.log" | tail -4; el racecheck
