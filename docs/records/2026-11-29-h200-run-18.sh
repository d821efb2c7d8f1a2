#!/usr/bin/env bash
# GPU run 18 (one H200): main 1a0da50 (the CPU cost model refitted) whole GPU suite; fft-overhead
# 35a58b9; tc-4d 8193041; dask-graph f379844 (python); cpu-dense 51117e3 on the host Xeon; ncu of
# the 3^3 median kernel.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz && tar xJf r18.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels-lite/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|^CPU\(s\)|MHz"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== main: suite"
for i in 0 1 2; do GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 240 bin/ndconv_gpu_tests > /tmp/shard$i.log 2>&1 & done
echo "=== fft (while the suite runs it shares the GPU: tests only)"
timeout 150 r18/fft/ndconv_gpu_tests --gtest_filter='CudaFft.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|actual" | tail -8; el fft-tests
wait
for i in 0 1 2; do grep -E "^\[  PASSED  \]|^\[  FAILED  \]" /tmp/shard$i.log | head -8; grep -B2 -A6 "Failure" /tmp/shard$i.log | head -24; done; el suite
echo "=== fft bench"
timeout 120 r18/fft/ndconv-perf bench --workload fft3d_11,fft3d_15,fft3d_21,dense3d_11 --quick --json /tmp/fft.json 2>&1 | grep -v "^\[" | grep -E "^fft|^dense|FFT|auto" | cut -c1-230 | head -30; el fft-bench
timeout 60 r18/fft/fft_sizes 256 336 2>&1 | tail -24; el fft-sizes
echo "=== tc-4d"
timeout 150 r18/tc/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.*:GpuBank.Adaptive*:GpuAdaptiveResident.*' 2>&1 | grep -E "accuracy|adaptive \]|FAILED|PASSED|Failure|Expected|actual" | head -24; el tc-tests
timeout 120 r18/tc/ndconv-perf bench --workload bank_4d,bank_4d_tc,bank_3d_tc,adaptive_4d --quick --json /tmp/tc.json 2>&1 | grep -v "^\[" | cut -c1-260 | tail -16; el tc-bench
timeout 90 r18/tc/tensor_bank_sweep 4d 2>&1 | tail -16; el tc-sweep
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 r18/tc/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*' 2>&1 | tail -2; echo "memcheck rc=${PIPESTATUS[0]}"; el tc-memcheck
echo "=== dask-graph"
cp pkg/ndconv/_ndconv*.so r18/dask/python/ndconv/
(cd r18/dask && PYTHONPATH=$PWD/python:$OLDPWD/pyx timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k 'cupy or gather or widened' 2>&1 | tail -3); el dask-tests
(cd r18/dask && PYTHONPATH=$PWD/python:$OLDPWD/pyx timeout 150 python3 python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 --breakdown 2>/tmp/dask.err | tail -60); tail -3 /tmp/dask.err; el dask-bench
echo "=== CPU rows on the Xeon: main, then cpu-dense"
timeout 60 bin/ndconv-perf bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 7 2>&1 | grep -E "^cpu"
timeout 60 r18/dense/ndconv-perf bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 7 2>&1 | grep -E "^cpu"
timeout 60 bin/ndconv-perf bench --device cpu --workload cpu3d_7 --call-reps 7 2>&1 | grep -E "^cpu"; el cpu
echo "=== ncu median r1"
timeout 90 ncu --kernel-name regex:median_kernel --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis bin/ndconv-perf bench --workload median3d_r1 --quick 2>&1 | grep -vE "^\[|^==PROF==" | grep -E "Throughput|Occupancy|Registers|Shared Memory|Block Size|Stall|Warp Cycles|Eligible|Issued|Duration|Active Warps|Theoretical|L1|L2|DRAM|Bank" | head -40; el ncu
