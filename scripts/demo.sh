#!/usr/bin/env bash
# Set-up, build, then the main job: smooth a bundled echocardiography volume (sigma 1.5 mm) on the
# GPU when one is usable, else on the CPU, and write a preview picture of input and output.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
build/src/cli/ndconv smooth sample_volumes/cardiacfield_example_vol.nii.gz out/echo_smoothed.nii.gz \
  --sigma 1.5 --preview out/echo_preview.png --force
build/src/cli/ndconv info out/echo_smoothed.nii.gz
echo "demo: smoothed volume in out/echo_smoothed.nii.gz; preview (input left, output right) in out/echo_preview.png"
