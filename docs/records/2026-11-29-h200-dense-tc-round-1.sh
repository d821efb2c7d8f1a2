#!/bin/bash
# dense-tc round 1: the tensor-core dense-filter probe (dev/dense_tc_probe.cu): every variant bit
# for bit against the exact integer kernel on 3 data sets, accuracy vs float64, timing vs the FP32
# FMA peak measured in the same process; then Nsight Compute on two variants; SASS instruction mix.
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/dense-tc}
mkdir -p "$L"
t0=$(date +%s)
el() { echo "[$1: $(( $(date +%s) - t0 )) s]"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1 | head -2
timeout 150 "$D/dense_tc_probe" full > "$L/probe.txt" 2>&1; echo "probe rc=$?"
echo "result lines with differing voxels (any variant, any data): $(grep -cE ': [1-9][0-9]* differ' "$L/probe.txt")"
grep -E "SMs|peak|split error|differ$|vs float64" "$L/probe.txt" | grep -vE ": 0 differ$" | head -20
echo "-- timing, fastest 6 per size (zs: output planes per block along z)"
for s in 7 11; do
  awk -v s=$s '/^== dense /{c=($3==s"^3")} c && / ms, /{split($0,a,"differ, "); split(a[2],b," ms"); print b[1]"\t"$0}' "$L/probe.txt" | sort -g | head -6 | cut -f2 | cut -c1-160
done
grep -E "FMA peak again" "$L/probe.txt"
el probe
for v in "t7 mt2 wx1 wy4" "t11 mt1 wx1 wy4"; do
  timeout 60 ncu --clock-control none -k regex:dense_tc_kernel --launch-count 1 --section SpeedOfLight \
    --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section MemoryWorkloadAnalysis \
    --section InstructionStats "$D/dense_tc_probe" quick "$v" > "$L/ncu-${v// /_}.txt" 2>&1
  echo "ncu $v rc=$?"
  grep -v "^==PROF==" "$L/ncu-${v// /_}.txt" | grep -E "Duration|Compute \(SM\) Throughput|Pipe|Issue Slots|Executed Ipc|Registers|Achieved Occupancy|Theoretical Occ|Shared|Bank|No Eligible|Warp Cycles Per Issued" | head -14
  el "ncu $v"
done
timeout 30 cuobjdump -sass "$D/dense_tc_probe" > "$L/sass.txt" 2>&1
awk '/Function :/{f=$3} /^\s+\/\*[0-9a-f]+\*\//{op=$2; if(op ~ /^@/) op=$3; sub(/\..*/,"",op); if (f ~ /dense_tc_kernel/) c[f" "op]++} END{for(k in c) print c[k], k}' "$L/sass.txt" | sort -k2,2 -k1,1nr > "$L/sass_mix.txt"
xz -f "$L/sass.txt"
el done
