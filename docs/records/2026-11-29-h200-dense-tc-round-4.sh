#!/bin/bash
# dense-tc round 4 (final): the branch's product binaries: the GPU tests (bit for bit vs the host's
# integer sums and repeatable, per-voxel accuracy vs the FP32 path on 3 data sets, boundaries, the
# notes), memcheck and racecheck, the bench rows dense3d_7_tc / dense3d_11_tc in one run (each with
# the FP32 dense kernel on the same data); then the probe (14 shapes, register-capped ones too).
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/dense-tc}
mkdir -p "$L"
t0=$(date +%s)
el() { echo "[$1: $(( $(date +%s) - t0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1
timeout 60 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorDense*' --gtest_output=xml:"$L/gtest.xml" > "$L/gtest.txt" 2>&1; echo "gtest rc=$?"
grep -E "^\[  (PASSED|FAILED) |^\[       OK|Failure" "$L/gtest.txt" | head -8
grep -o '<property [^>]*>' "$L/gtest.xml" | sed 's/<property name=//; s/ value=/: /; s/\/>//' | head -6 | tr '\n' ' '; echo
el gtest
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorDense.SmallShapesForTheSanitizers' > "$L/$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/$tool.txt" | head -1)"
done
el sanitizers
timeout 90 "$D/ndconv-perf" bench --workload dense3d_7_tc,dense3d_11_tc --json "$L/bench.json" > "$L/bench.txt" 2>&1; echo "bench rc=$?"
grep -E "FMA peak|dense3d|tensor cores|failures" "$L/bench.txt" | cut -c1-170 | head -8
el bench
timeout 60 "$D/dense_tc_probe" full > "$L/probe.txt" 2>&1; echo "probe rc=$?"
echo "result lines with differing voxels: $(grep -cE ': [1-9][0-9]* differ' "$L/probe.txt")"
grep -E "peak" "$L/probe.txt" | head -2
for s in 7 11; do
  awk -v s=$s '/^== dense /{c=($3==s"^3")} c && / ms, /{split($0,a,"differ, "); split(a[2],b," ms"); print b[1]"\t"$0}' "$L/probe.txt" | sort -g | head -5 | cut -f2 | cut -c1-150
done
el done
