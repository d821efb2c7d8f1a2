#!/bin/bash
# tc-recon round 1: the 4D reconstruction's weighted sum on the tensor cores (mma.sync, 9^4 filters
# as two K rows per tap row, weights streamed a frame at a time, the sum in the epilogue):
# the new GPU tests (bit for bit against the host emulation, accuracy against float64 and the FP32
# path, the adaptive filter on 8-bit input), the bench rows bank_sum_3d and adaptive_4d, and
# memcheck / racecheck on the weighted sum's small shape. Budget: 120 device seconds.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/tc-recon}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== gpu tests (tensor-core bank, new weighted sum first)"
timeout 45 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorCoreBank.TheWeightedSum*:GpuTensorCoreBank.WeightedSum*:GpuTensorCoreBank.TheAdaptiveFilterOn8BitInput*:GpuTensorCoreBank.SmallShapes*:GpuTensorCoreBank.EqualsTheHostEmulation*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|PASSED|SKIPPED) |Failure|accuracy|adaptive \]' -A1 "$L/tests.log" | cut -c1-200 | head -30; el tests
echo "=== bench"
timeout 35 "$D/ndconv-perf" bench --workload bank_sum_3d,adaptive_4d --quick --json "$L/bench.json" > "$L/bench.log" 2>&1; echo "rc=$?"
grep -E "^(bank_sum_3d|adaptive_4d)" "$L/bench.log" | cut -c1-220 | head -6
timeout 5 python3 - "$L/bench.json" <<'PY' 2>&1 | cut -c1-400 | head -16
import json, sys
def walk(j):
    if isinstance(j, dict):
        if j.get("name") in ("adaptive_4d", "bank_sum_3d") or "stages" in j:
            yield j
        for v in j.values():
            yield from walk(v)
    elif isinstance(j, list):
        for v in j:
            yield from walk(v)
seen = set()
for r in walk(json.load(open(sys.argv[1]))):
    if id(r) in seen: continue
    seen.add(id(r))
    if "stages" in r:
        print("stages:", [(s["stage"], round(s["median_ms"], 1)) for s in r["stages"]])
        print("total_without_design_ms:", r.get("total_without_design_ms"), "bank_kernels:", r.get("bank_kernels"))
        for n in r.get("notes", []): print("note:", n)
    else:
        print({k: v for k, v in r.items() if not isinstance(v, (dict, list))})
PY
el bench
echo "=== memcheck"
timeout 18 compute-sanitizer --tool memcheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorCoreBank.WeightedSumSmallShape*' > "$L/memcheck.log" 2>&1; echo "rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" "$L/memcheck.log" | head -4; el memcheck
echo "=== racecheck"
timeout 20 compute-sanitizer --tool racecheck --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorCoreBank.WeightedSumSmallShape*' > "$L/racecheck.log" 2>&1; echo "rc=$?"
grep -E "RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED" "$L/racecheck.log" | head -4; el racecheck
