#!/usr/bin/env bash
# Set-up, build, then the main job: smooth a bundled echocardiography volume and write a preview.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
mkdir -p out
build/src/cli/ndconv smooth sample_volumes/cardiacfield_example_vol.nii.gz out/echo_smoothed.nii.gz \
  --sigma 1.5 --preview out/echo_preview.png --force
