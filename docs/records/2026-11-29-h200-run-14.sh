#!/usr/bin/env bash
# GPU run 14 (one H200): the tensor-core filter bank of branch tensor-bank (8ff2c43): its GPU
# tests, the bank_3d / bank_3d_tc bench rows, the block-shape sweep, memcheck and racecheck; the
# CPU rows against the host CPU's FMA peak (main's ndconv-perf, CPU-only build).
set -uo pipefail
cd "$(dirname "$0")/tc"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)|Thread" ; grep -o -w "amx_int8\|amx_tile\|avx512_vnni\|avx512f" /proc/cpuinfo | sort | uniq -c
t0=$(date +%s)
timeout 120 ./ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.*:GpuBank.*' 2>&1 | grep -E "accuracy|OK|FAILED|PASSED|Failure|error|Expected|Which is" | head -60
echo "tests at $(( $(date +%s) - t0 )) s"
timeout 120 ./ndconv-perf bench --workload bank_3d,bank_3d_tc --reps 10 --call-reps 1 2>&1 | grep -v "^\[" | tail -12
echo "bench at $(( $(date +%s) - t0 )) s"
timeout 90 ./tensor_bank_sweep 2>&1 | tail -25
echo "sweep at $(( $(date +%s) - t0 )) s"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 ./ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*' 2>&1 | tail -3; echo "memcheck rc=${PIPESTATUS[0]}"
timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 ./ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*' 2>&1 | tail -3; echo "racecheck rc=${PIPESTATUS[0]}"
timeout 60 ./ndconv-perf-cpu bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 7 2>&1 | grep -E "^cpu|workload"
timeout 60 ./ndconv-perf-cpu bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 7 --threads 16 2>&1 | grep -E "^cpu"
echo "done at $(( $(date +%s) - t0 )) s"
