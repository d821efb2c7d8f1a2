#!/usr/bin/env bash
# GPU run 15 (one H200): the tensor-core bank (tensor-bank 2164c4f: tests, bench rows, sweep with
# the mma.sync ceiling, Nsight Compute on the product's kernel), the one-pass Gaussian and the
# sorted-planes median (memory-floor ~7bcc14c: tests, bench rows, memcheck), the AMX bank on the
# host Xeon (amx-bank 3a8aac5), and cuFFT float64 transform sizes through CuPy.
set -uo pipefail
cd "$(dirname "$0")" && tar xJf r15.tar.xz && cd r15
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== tensor-bank"
timeout 120 tb/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.*' 2>&1 | grep -E "accuracy|OK \]|FAILED|PASSED|Failure|Expected|actual" | head -30; el tests
timeout 90 tb/ndconv-perf bench --workload bank_3d,bank_3d_tc --reps 10 --call-reps 1 2>&1 | grep -E "^bank|tensor cores|FP32 FMA peak" | head; el bench
timeout 90 tb/tensor_bank_sweep 2>&1 | tail -16; el sweep
timeout 120 ncu --kernel-name regex:tensor_core_bank_kernel --launch-skip 1 --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats --section Occupancy tb/tensor_bank_sweep 2>&1 | grep -v "^==PROF==" | grep -E "Duration|Throughput|Pipe|Issue|Stall|Warp Cycles|Occupancy|Executed Ipc|Registers|Tensor|Block Limit|Eligible|No Eligible|One or More|Active Warps|^  [a-z_]+_kernel|SM Busy|Memory" | head -45; el ncu
echo "=== memory-floor"
timeout 150 mf/ndconv_gpu_tests --gtest_filter='CudaSlab*:CudaSeparable*:CudaSeparableLarge*:GpuBoundaryModes*:FiltersGpu.Median*:MedianDeviceGpu*' 2>&1 | grep -E "OK \]|FAILED|PASSED|Failure|Expected|actual|Which is" | tail -40; el tests
timeout 120 mf/ndconv-perf bench --workload gauss3d_s2,median3d_r1,median3d_r3 --quick --json /tmp/mf.json 2>&1 | grep -v "^\[" | tail -12; el bench
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 mf/ndconv_gpu_tests --gtest_filter='CudaSlab.NanStaysInsideTheFootprint:MedianDeviceGpu.MatchesReferenceAndCpuBitForBit' 2>&1 | tail -3; echo "memcheck rc=${PIPESTATUS[0]}"; el memcheck
echo "=== amx-bank"
timeout 120 amx/ndconv_engine_tests --gtest_filter='CpuInt8Bank.*' 2>&1 | grep -E "OK \]|FAILED|PASSED|SKIPPED|Failure|Expected|actual|accuracy|\[ " | tail -30; el tests
timeout 120 amx/ndconv-perf bench --device cpu --workload cpu_bank_3d,cpu_bank_3d_u8 --call-reps 7 --json - 2>/dev/null | grep -E '"workload"|median_ms|pct_cpu_fma_peak|"path"|cpu_fma_peak_gfma|threads' ; el bench
echo "=== cuFFT sizes"
timeout 90 python3 fft_sizes.py 2>&1 | tail -10; el fft
