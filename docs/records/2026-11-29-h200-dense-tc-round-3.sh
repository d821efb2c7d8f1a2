#!/bin/bash
# dense-tc round 3: the kernel's epilogue without 64-bit work (int32 join for 7^3, a running output
# pointer, stores predicated), the 11^3 tile of 2 M tiles, the block depth by waves x planes: the
# probe over 13 shapes x 3 depths (bit for bit vs the exact integer kernel, 3 data sets) and ncu on
# the 7^3 tile (the product binaries follow in round 4).
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/dense-tc}
mkdir -p "$L"
t0=$(date +%s)
el() { echo "[$1: $(( $(date +%s) - t0 )) s]"; }
timeout 60 "$D/dense_tc_probe" full > "$L/probe.txt" 2>&1; echo "probe rc=$?"
echo "result lines with differing voxels: $(grep -cE ': [1-9][0-9]* differ' "$L/probe.txt")"
grep -E "peak" "$L/probe.txt" | head -3
echo "-- probe, fastest 6 per size"
for s in 7 11; do
  awk -v s=$s '/^== dense /{c=($3==s"^3")} c && / ms, /{split($0,a,"differ, "); split(a[2],b," ms"); print b[1]"\t"$0}' "$L/probe.txt" | sort -g | head -6 | cut -f2 | cut -c1-150
done
el probe
timeout 45 ncu --clock-control none -k regex:tensor_dense_kernel --launch-count 1 --section SpeedOfLight \
  --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section InstructionStats \
  --metrics sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_imma.avg.pct_of_peak_sustained_active \
  "$D/dense_tc_probe" quick "t7 mt2 wx1 wy4" > "$L/ncu-t7.txt" 2>&1
echo "ncu rc=$?"
grep -v "^==PROF==" "$L/ncu-t7.txt" | grep -E "Duration|Issue Slots|Executed Ipc A|imma|highest-utilized|Executed Instructions  |Warp Cycles Per Issued|Achieved Occ|Stall" | cut -c1-120 | head -12
timeout 20 cuobjdump -sass "$D/dense_tc_probe" > "$L/sass.txt" 2>&1; xz -f "$L/sass.txt"
el done
