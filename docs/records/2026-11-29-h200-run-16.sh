#!/usr/bin/env bash
# GPU run 16 (one H200): tensor-bank 08ee5ba, memory-floor 13ed6bd, amx-bank af19e8f (on the host
# Xeon), and the FFT path with out-of-place transforms (branch fft-oop cea4bb7) with
# dev/fft_layout.cu.
set -uo pipefail
cd "$(dirname "$0")" && tar xJf r16.tar.xz && cd r16
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== fft"
timeout 60 fft/fft_layout 2>&1 | tail -8; el layout
timeout 120 fft/ndconv_gpu_tests --gtest_filter='CudaFft.*' 2>&1 | grep -E "OK \]|FAILED|PASSED|Failure|Expected|actual" | tail -12; el tests
timeout 120 fft/ndconv-perf bench --workload fft3d_11,fft3d_15,fft3d_21 --quick 2>&1 | grep -v "^\[" | grep -E "fft|direct|auto|error" | head -16; el bench
echo "=== amx-bank"
timeout 120 amx/ndconv_engine_tests --gtest_filter='CpuInt8Bank.*' 2>&1 | grep -E "OK \]|FAILED|PASSED|SKIPPED|Failure|Expected|actual|accuracy|Illegal" | tail -20; el tests
timeout 120 amx/ndconv-perf bench --device cpu --workload cpu_bank_3d,cpu_bank_3d_u8 --call-reps 7 --json - 2>/dev/null | grep -E '"workload"|median_ms|pct_cpu_fma_peak|"path"|cpu_fma_peak_gfma"'; el bench
(cd amx && timeout 60 ./amx_bank_parts 16 2>&1 | tail -12; timeout 60 ./amx_bank_parts 1 2>&1 | tail -12); el parts
echo "=== tensor-bank"
timeout 120 tb/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.*' 2>&1 | grep -E "accuracy|OK \]|FAILED|PASSED|Failure|Expected|actual" | head -20; el tests
timeout 90 tb/ndconv-perf bench --workload bank_3d,bank_3d_tc --reps 10 --call-reps 1 2>&1 | grep -E "^bank|tensor cores|FP32 FMA peak" | head; el bench
timeout 120 tb/tensor_bank_sweep 2>&1 | tail -20; el sweep
echo "=== memory-floor"
timeout 150 mf/ndconv_gpu_tests --gtest_filter='CudaSlab*:CudaSeparable*:CudaSeparableLarge*:GpuBoundaryModes*:FiltersGpu.Median*:MedianDeviceGpu*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|actual|Which is" | tail -20; el tests
timeout 120 mf/ndconv-perf bench --workload gauss3d_s2,gauss3d_s2_272,median3d_r1,median3d_r3 --quick 2>&1 | grep -v "^\[" | tail -10; el bench
timeout 120 mf/slab_sweep 2>&1 | tail -32; el sweep
