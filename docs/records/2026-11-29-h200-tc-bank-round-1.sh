#!/bin/bash
# tc-bank round 1 (issue 49): candidates for bank_4d_tc (needs +1.4% for 300%) and bank_3d_tc,
# each bit for bit the host emulation on a small problem first (NaN-poisoned outputs), then timed
# side by side with the current default, the list repeated 3 times in one process (medians of
# 4 (4D) / 10 (3D) launches each). Candidates: N = the MMA warps' loop counters in 32 bits;
# S = a warpgroup whose rows are all past the volume (last tile along y: 128 = 10 x 12 + 8,
# 256 = 10 x 24 + 16) skips its MMAs; 2 M x 16 MMA warps (16-row tiles, no idle rows) at 104
# registers; P = frames paired, their tail chunks (one tap row each) in one (88 chunks a 4D
# tile instead of 91); N 96 in 4D (streamed weights) with S. Then a SASS summary (IGMMA vs WARPGROUP.DEPBAR/ARRIVE per
# kernel): ptxas reports C7512 (wgmmas serialized for want of registers) on the 4D default.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-$OUT/tc-bank}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
chmod +x "$D"/wgmma_bank_sweep 2>/dev/null
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv,noheader 2>&1 | head -1
short() { sed -E 's/ +useful TFLOP\/s/ TF/; s/ int8 TOPS/ T/; s/, 0 B local//; s/ B shared/ B sh/; s/ +/ /g; s/ MMA warps/ MW/' "$1" | cut -c1-112; }
sweep() {  # mode, seconds, repeats
  local k=0 rc
  : > "$L/sweep$1.log"
  for attempt in 1 2 3; do
    timeout "$2" "$D/wgmma_bank_sweep" "$1" "$k" "$3" >> "$L/sweep$1.log" 2>&1; rc=$?
    echo "rc=$rc (from $k)"
    [ $rc -eq 3 ] || break
    k=$(( $(grep -E '^\[[0-9]+\].*HANG' "$L/sweep$1.log" | tail -1 | sed -E 's/^\[([0-9]+)\].*/\1/') + 1 ))
  done
}
echo "=== sweep 4d"; sweep 4d 60 3; short "$L/sweep4d.log" | grep -v "^bank" | head -26; el sweep4d
echo "=== sweep 3d"; sweep 3d 25 3; short "$L/sweep3d.log" | grep -v "^bank" | head -14; el sweep3d
echo "=== sass"
timeout 15 cuobjdump -sass "$D/wgmma_bank_sweep" > "$L/all.sass" 2>&1
awk '/Function :/ {if (f) printf "%s IGMMA %d DEPBAR %d ARRIVE %d\n", f, g, d, r; f=$3; g=d=r=0}
     /IGMMA/ {g++} /WARPGROUP.DEPBAR/ {d++} /WARPGROUP.ARRIVE/ {r++}
     END {if (f) printf "%s IGMMA %d DEPBAR %d ARRIVE %d\n", f, g, d, r}' "$L/all.sass" > "$L/sass-summary.txt"
grep ws_bank "$L/sass-summary.txt" | sed -E 's/_ZN6ndconv9cuda_bank20wgmma_ws_bank_kernelINS0_14TensorCoreTileILi([0-9])ELi([0-9]+)ELNS0_16TensorCoreCopiesE1ELi([12])ENS0_18TensorCoreTapShapeILi7ELi7ELi2ELi7EEELb0EEE/K<\1,\2,\3>/; s/EEEvNS0_14TensorCoreArgsE//'
# The 4D default's MMA loop, for reading (small).
awk '/Function :.*ILi4ELi12E.*Li152ELb1ELi1ELb0ELb0E/ {p=1; next} /Function :/ {p=0} p' "$L/all.sass" | grep -nE "IGMMA|WARPGROUP|LDS|BAR|SYNCS|BRA" | head -300 > "$L/sass-4d-default.txt"
xz -T2 "$L/all.sass" 2>/dev/null; ls -la "$L" | tail -n +2 | awk '{print $5, $9}'
el sass
