#!/usr/bin/env bash
# GPU run 20 (one H200): the merged tree (main with cpu-dense, dask-graph, fft-overhead, tc-4d and
# the median's register budget): the whole GPU suite, sanitizers over the new kernels' short
# tests, the bench rows of issue 49, the package's dask/CuPy tests and the dask benchmark, the CPU
# rows on the host Xeon.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels-lite/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=${OUT:-/tmp}; t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 0 1 2; do GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 200 bin/ndconv_gpu_tests > $L/shard$i.log 2>&1 & done; wait
for i in 0 1 2; do grep -E "^\[  PASSED  \]|^\[  FAILED  \]" $L/shard$i.log | head -8; grep -B2 -A6 "Failure" $L/shard$i.log | head -20; done; el suite
MEMCHECK="GpuTensorCoreBank.SmallShapesForTheSanitizers:CudaFft.NanAndInfReachExactlyTheOutputsWhoseFootprintHoldsThem:CudaFft.PlansAndSpectraAreKeptAndReleased:MedianDeviceGpu.MatchesReferenceAndCpuBitForBit"; RACECHECK="GpuTensorCoreBank.SmallShapesForTheSanitizers:MedianDeviceGpu.MatchesReferenceAndCpuBitForBit"
timeout 70 compute-sanitizer --tool memcheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$MEMCHECK" > $L/memcheck.log 2>&1; echo "memcheck rc=$?"; tail -1 $L/memcheck.log; el memcheck
timeout 70 compute-sanitizer --tool racecheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$RACECHECK" > $L/racecheck.log 2>&1; echo "racecheck rc=$?"; tail -1 $L/racecheck.log; el racecheck
timeout 150 bin/ndconv-perf bench --workload bank_3d_tc,bank_4d_tc,adaptive_4d,fft3d_15,fft3d_21,median3d_r1 --quick --json $L/bench.json > $L/bench.log 2>&1; grep -vE "^\[|^  FFT" $L/bench.log | cut -c1-260 | tail -30; el bench
(cd .. && timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k 'cupy or gather or whole_arrays' > $L/dask-tests.log 2>&1; tail -2 $L/dask-tests.log); el dask-tests
(cd .. && timeout 120 python3 python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 --breakdown --repeats 5 > $L/dask-bench.log 2> $L/dask-bench.err; head -16 $L/dask-bench.log; tail -2 $L/dask-bench.err); el dask-bench
timeout 60 bin/ndconv-perf bench --device cpu --workload cpu3d_7,cpu_bank_3d --call-reps 7 2>&1 | grep -E "^cpu"; el cpu
