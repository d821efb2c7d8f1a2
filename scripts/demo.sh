#!/usr/bin/env bash
# Set-up, build of the command line alone, then the main job: smooth a bundled echocardiography
# volume (sigma 1.5 mm) on the GPU when one is usable, else on the CPU, and write a preview
# picture of input and output. Ends with a short summary.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash scripts/setup.sh ndconv
built=$(date +%s)
mkdir -p out
in=sample_volumes/cardiacfield_example_vol.nii.gz
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! build/src/cli/ndconv smooth "$in" out/echo_smoothed.nii.gz --sigma 1.5 \
  --preview out/echo_preview.png --force --verbose 2>"$log"; then
  cat "$log" >&2
  exit 1
fi
done_at=$(date +%s)
device=$(sed -n 's/^plan: backend \([a-z]*\).*/\1/p' "$log" | head -1)
why=$(sed -n 's/^plan: backend [a-z]* (\(.*\))$/\1/p' "$log" | head -1)
timings=$(sed -n 's/^timings: //p' "$log" | head -1)
echo
echo "demo: smoothed $in with a 1.5 mm Gaussian"
if [[ $device == cpu ]]; then
  echo "  ran on:   the CPU, all cores (for information: ${why:-no usable GPU})"
else
  echo "  ran on:   the GPU (${why:-?})"
fi
echo "  timings:  ${timings:-?}"
echo "  volume:   out/echo_smoothed.nii.gz"
echo "  preview:  out/echo_preview.png (input left, output right)"
echo "  took:     $((done_at - built)) s for the command, $((built - start)) s to set up and build"
