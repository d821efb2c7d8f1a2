#!/usr/bin/env bash
# Lead, round 1: main's 4D accuracy test with its float64 reference on every hardware thread
# (2341b17), timed (run 20's shard stopped inside it).
set -uo pipefail
D=$(dirname "$0")
s=$(date +%s); timeout 150 $D/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.AsAccurateAsTheFp32KernelPerVoxel*' > $L/asaccurate.log 2>&1; echo "AsAccurate rc=$? in $(( $(date +%s) - s )) s"; grep -E "^\[ +(OK|FAILED|PASSED)" $L/asaccurate.log | head
