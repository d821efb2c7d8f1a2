#!/usr/bin/env bash
# Lead, round 1: CudaSeparableBits (every GPU plan the same bits; the streaming kernel checked as
# its own plan) and the slab/streaming NaN tests after the shared-case refactor, and the block-scale test, at main b1b47b3.
D=$(dirname "$0")
F='GpuBank.AdaptiveScales*:CudaSeparableBits.*:CudaStream.NanStaysInsideTheFootprint:CudaSlab.NanStaysInsideTheFootprint:CudaStream.EveryPlanGivesTheSameBits'
timeout 100 $D/ndconv_gpu_tests --gtest_filter="$F" > $L/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[ +(OK|FAILED) |^\[  PASSED|^\[  FAILED" $L/tests.log | head -12; grep -A8 "Failure" $L/tests.log | head -20
