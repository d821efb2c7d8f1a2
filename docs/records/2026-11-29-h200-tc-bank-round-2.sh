#!/bin/bash
# tc-bank round 2 (final; issue 49). The product's default for bank_4d_tc is now round 1's winner:
# frames paired, their one-row tail chunks in one (88 K chunks a 4D tile instead of 91; 39.46-39.61
# against 40.04-40.10 ms), 32-bit counts. New since round 1: Split, the two A register sets of
# fewer M tiles, so that ptxas does not serialize the wgmmas (round 1's SASS: 4D default 52 IGMMA,
# 52 WARPGROUP.DEPBAR a frame). perf-pair.tar.xz holds two ndconv-perf builds of one commit
# (f1213d0): ndconv-perf (defaults: 3D as before, 4D paired tails) and ndconv-perf-split (both
# defaults with Split 2; the shape lists reordered, nothing else). 1) the sweeps time the
# candidates side by side (each bit for bit the host emulation first), 3 times; 2) each bench row
# runs on the build whose default won the sweep (lower median), beside the FP32 row; 3) the tensor
# bank's GPU tests on every listed shape; 4) racecheck and memcheck on the small shapes; 5) the
# bank_4d_tc row again if time is left.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/tc-bank}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
left() { [ $(( $(date +%s) - t0 )) -lt "$1" ]; }
W=$(mktemp -d)
tar xJf "$D/perf-pair.tar.xz" -C "$W" 2>/dev/null || python3 -c "import tarfile,sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" "$D/perf-pair.tar.xz" "$W"
cp "$D/wgmma_bank_sweep" "$D/ndconv_gpu_tests" "$W/"; chmod +x "$W"/*
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader 2>&1 | head -1
short() { sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//; s/ B shared/ B sh/; s/ +/ /g; s/ MMA warps/ MW/' "$1" | cut -c1-100; }
med() { grep -E "^\[$2\] " "$1" | grep -E " ms " | sed -E 's/.* ([0-9.]+) ms .*/\1/' | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print 999}'; }
echo "=== sweep 4d"
timeout 20 "$W/wgmma_bank_sweep" 4d 0 3 > "$L/sweep4d.log" 2>&1; echo "rc=$?"
short "$L/sweep4d.log" | grep -v "^bank" | head -20; el sweep4d
echo "=== sweep 3d"
timeout 10 "$W/wgmma_bank_sweep" 3d 0 3 > "$L/sweep3d.log" 2>&1; echo "rc=$?"
short "$L/sweep3d.log" | grep -v "^bank" | head -10; el sweep3d
m4a=$(med "$L/sweep4d.log" 2); m4b=$(med "$L/sweep4d.log" 3); m3a=$(med "$L/sweep3d.log" 1); m3b=$(med "$L/sweep3d.log" 2)
P4=ndconv-perf; awk -v a="$m4a" -v b="$m4b" 'BEGIN {exit !(b < a)}' && P4=ndconv-perf-split
P3=ndconv-perf; awk -v a="$m3a" -v b="$m3b" 'BEGIN {exit !(b < a)}' && P3=ndconv-perf-split
echo "medians 4D paired $m4a, +Split2 $m4b -> $P4; 3D default $m3a, Split2 $m3b -> $P3"
echo "=== bench"
timeout 30 "$W/$P4" bench --workload bank_4d_tc,bank_4d --quick --call-reps 1 --json "$L/bench4d.json" > "$L/bench4d.log" 2>&1; echo "rc=$?"
timeout 18 "$W/$P3" bench --workload bank_3d_tc,bank_3d --quick --call-reps 1 --json "$L/bench3d.json" > "$L/bench3d.log" 2>&1; echo "rc=$?"
grep -hE "^device|^bank" "$L/bench4d.log" "$L/bench3d.log" | cut -c1-150 | head -6; el bench
echo "=== gpu tests"
timeout 35 "$W/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank*:GpuTensorCoreBank.TheBankTakes*:GpuTensorCoreBank.TheAdaptive*' > "$L/tests.log" 2>&1; echo "rc=$?"
grep -E '^\[ *(OK|FAILED|SKIPPED) |Failure|exception|wgmma shape|\[ adaptive|PASSED' "$L/tests.log" | cut -c1-150 | head -12; el tests
if left 80; then
  echo "=== racecheck"
  timeout 22 compute-sanitizer --tool racecheck --error-exitcode 9 "$W/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/racecheck.log" 2>&1; echo "rc=$?"
  grep -E "RACECHECK SUMMARY|\[ *(OK|FAILED|SKIPPED) |Failure" "$L/racecheck.log" | head -4; el racecheck
fi
if left 100; then
  echo "=== memcheck"
  timeout 6 compute-sanitizer --tool memcheck --error-exitcode 9 "$W/ndconv_gpu_tests" --gtest_filter='GpuWgmmaBank.SmallShapesForTheSanitizers' > "$L/memcheck.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|\[ *(OK|FAILED|SKIPPED) |Failure" "$L/memcheck.log" | head -4; el memcheck
fi
if left 94; then
  echo "=== bench again (4D)"
  timeout 12 "$W/$P4" bench --workload bank_4d_tc --quick --call-reps 1 --json "$L/bench-again.json" > "$L/bench-again.log" 2>&1; echo "rc=$?"
  grep -E "^device|^bank" "$L/bench-again.log" | cut -c1-150 | head -3; el bench-again
fi
rm -rf "$W"
