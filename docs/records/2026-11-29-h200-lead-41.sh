#!/usr/bin/env bash
# GPU run 41, the lead's part (one H200): the command line's suite with the GPU
# (NDCONV_TEST_DEVICE=cuda ndconv_cli_tests) on the final tree's command line: the batch's lanes,
# the warm-up of a device list, outputs allocated before the GPU's turn, ndconv serve.
set -uo pipefail
cd "$(dirname "$0")"
REPO=$(cd .. && pwd)
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf bin lib pkg x41; tar xJf bundle.tar.xz; tar xJf x41.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
# The test binary runs the command line and reads the samples at the development machine's paths.
[ -e /work/main ] || { mkdir -p /work && ln -s "$REPO" /work/main; }
mkdir -p /work/main/build-cuda/src/cli && cp bin/ndconv /work/main/build-cuda/src/cli/ndconv
ls /work/main/sample_volumes | head -2
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
el "cli suite"
NDCONV_TEST_DEVICE=cuda timeout 200 x41/ndconv_cli_tests --gtest_brief=1 > $OUT/cli-gpu.log 2>&1; echo "cli suite rc=$?"
grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|SKIPPED \]|tests ran" $OUT/cli-gpu.log | head -12
el done
