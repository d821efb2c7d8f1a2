#!/bin/bash
# dense-tc round 2: the product's tensor-core dense kernel (src/cuda/tensor_dense/, per-plane
# overheads removed after round 1's profile): the probe over 12 block shapes x 3 depths (bit for
# bit vs the exact integer kernel, 3 data sets); the GPU tests (bit for bit vs the host's integer
# sums, per-voxel accuracy vs the FP32 path through filter_dense_stored, boundaries, the notes);
# memcheck and racecheck; the bench rows dense3d_7_tc, dense3d_11_tc (each with the FP32 dense
# kernel on the same data) in one run; ncu on the product tiles.
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/dense-tc}
mkdir -p "$L"
t0=$(date +%s)
el() { echo "[$1: $(( $(date +%s) - t0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>&1 | head -1
timeout 100 "$D/dense_tc_probe" full > "$L/probe.txt" 2>&1; echo "probe rc=$?"
echo "result lines with differing voxels: $(grep -cE ': [1-9][0-9]* differ' "$L/probe.txt")"
grep -E "peak|vs float64" "$L/probe.txt" | head -10
echo "-- probe, fastest 5 per size"
for s in 7 11; do
  awk -v s=$s '/^== dense /{c=($3==s"^3")} c && / ms, /{split($0,a,"differ, "); split(a[2],b," ms"); print b[1]"\t"$0}' "$L/probe.txt" | sort -g | head -5 | cut -f2 | cut -c1-150
done
el probe
timeout 120 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorDense*' --gtest_output=xml:"$L/gtest.xml" > "$L/gtest.txt" 2>&1; echo "gtest rc=$?"
grep -E "^\[  (PASSED|FAILED|  OK|SKIPPED) |FAILED|Failure" "$L/gtest.txt" | head -10
grep -o '<property [^>]*>' "$L/gtest.xml" | sed 's/<property name=//; s/ value=/: /; s/\/>//' | head -6 | tr '\n' ' '; echo
el gtest
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 "$D/ndconv_gpu_tests" --gtest_filter='GpuTensorDense.SmallShapesForTheSanitizers' > "$L/$tool.txt" 2>&1
  echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/$tool.txt" | head -1)"
done
el sanitizers
timeout 150 "$D/ndconv-perf" bench --workload dense3d_7_tc,dense3d_11_tc --json "$L/bench.json" > "$L/bench.txt" 2>&1; echo "bench rc=$?"
grep -E "FMA peak|dense3d|tensor cores|failures" "$L/bench.txt" | cut -c1-200 | head -12
el bench
for v in "t7 mt2 wx1 wy4" "t11 mt1 wx1 wy4"; do
  timeout 60 ncu --clock-control none -k regex:tensor_dense_kernel --launch-count 1 --section SpeedOfLight \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section InstructionStats \
    "$D/dense_tc_probe" quick "$v" > "$L/ncu-${v// /_}.txt" 2>&1
  echo "ncu $v rc=$?"
  grep -v "^==PROF==" "$L/ncu-${v// /_}.txt" | grep -E "Duration|Issue Slots|Executed Ipc A|imma|highest-utilized|Executed Instructions  |No Eligible|Warp Cycles Per Issued|Achieved Occ" | cut -c1-120 | head -10
  el "ncu $v"
done
timeout 40 ncu --clock-control none -k regex:tensor_dense_kernel --launch-count 1 \
  --metrics sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_imma.avg.pct_of_peak_sustained_active \
  "$D/dense_tc_probe" quick "t7 mt2 wx1 wy4" > "$L/ncu-imma.txt" 2>&1
echo "ncu imma rc=$?"; grep -E "imma|ERROR" "$L/ncu-imma.txt" | cut -c1-120 | head -4
el done
timeout 30 cuobjdump -sass "$D/dense_tc_probe" > "$L/sass.txt" 2>&1; xz -f "$L/sass.txt"
