#!/usr/bin/env bash
# GPU run B2: the register-blocking study sweep of core-layers (the tiled KO by register budget
# against every compiled point), the bank rows of both trees again (their whole-call spread), and
# the CLI's outputs of both trees on the bundled samples with --device cuda (byte for byte).
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
o=$OUT
t0=$(date +%s)
timeout 330 ./new_ndconv-perf sweep --csv $o/sweep.csv --json $o/sweep.json --force --check-budget 1e10 > $o/sweep.txt 2>&1
echo "sweep rc=$? at $(( $(date +%s) - t0 )) s"; tail -5 $o/sweep.txt
for who in base new base new; do
  timeout 60 ./${who}_ndconv-perf bench --workload bank_3d,bank_4d --reps 5 --call-reps 5 > $o/bank-$who.txt 2>&1
  grep -E 'bank_' $o/bank-$who.txt | sed "s/^/$who /"
done
s=../sample_volumes; mkdir -p cli/base cli/new
for who in base new; do
  b=./${who}_ndconv
  $b smooth $s/cardiacfield_example_vol.nii.gz cli/$who/smooth3d.nii --sigma 1.5 --device cuda -q
  $b smooth $s/nibabel_example4d.nii.gz cli/$who/smooth4d.nii --sigma 2vox --time-sigma 1vox --device cuda -q
  $b convolve $s/cardiacfield_a4c_rotation_stack.mha cli/$who/conv.mha --kernel gauss:2 --device cuda -q
  $b median $s/plus_SpinePhantomFreehandReconstructed.mha cli/$who/median.mha --radius 1 --device cuda -q
  $b adaptive $s/cardiacfield_example_vol.nii.gz cli/$who/adaptive.nii --preset echo --device cuda -q
  $b smooth $s/cardiacfield_example_vol.nii.gz cli/$who/smooth_auto.nii --sigma 1.5 -q
done
for f in cli/base/*; do n=$(basename $f); if cmp -s $f cli/new/$n; then echo "identical $n"; else echo "DIFFER $n"; fi; done
echo "done at $(( $(date +%s) - t0 )) s"
