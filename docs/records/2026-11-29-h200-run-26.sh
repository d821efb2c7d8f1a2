#!/usr/bin/env bash
# GPU run 26 (one H200): the merged tree of the session (median-cols, tc-recon, dask-exact,
# gauss-stream, wgmma): the whole GPU suite in 4 shards, the sanitizers over the new kernels' short
# tests, the bench rows of issue 49, the package's dask/CuPy tests and the dask benchmark.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels-lite/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=${OUT:-/tmp}/logs; mkdir -p $L; t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 0 1 2 3; do GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$i timeout 170 bin/ndconv_gpu_tests > $L/shard$i.log 2>&1 & done; wait
for i in 0 1 2 3; do grep -E "^\[  PASSED  \]|^\[  FAILED  \]|^\[==========\]" $L/shard$i.log | head -6; grep -B2 -A6 "Failure" $L/shard$i.log | head -16; done; el suite
SAN="MedianDeviceGpu.EveryColumnShapeMatchesTheReference:CudaStream.NanStaysInsideTheFootprint:GpuWgmmaBank.SmallShapesForTheSanitizers:GpuTensorCoreBank.WeightedSumSmallShapeForTheSanitizers"
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$SAN" > $L/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $L/memcheck.log | head -3; el memcheck
timeout 80 compute-sanitizer --tool racecheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter="$SAN" > $L/racecheck.log 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY|PASSED|FAILED" $L/racecheck.log | head -3; el racecheck
timeout 150 bin/ndconv-perf bench --workload bank_3d,bank_3d_tc,bank_4d,bank_4d_tc,adaptive_4d,gauss3d_s2,gauss3d_s2_272,median3d_r1,median3d_r3 --quick --json $L/bench.json > $L/bench.log 2>&1; echo "bench rc=$?"; grep -vE "^\[|^measuring|^  FFT" $L/bench.log | cut -c1-230 | tail -22; el bench
(cd .. && timeout 90 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k 'cupy or gather or whole_arrays' > $L/dask-tests.log 2>&1; echo "dask tests rc=$?"; tail -2 $L/dask-tests.log); el dask-tests
(cd .. && timeout 120 python3 python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 --breakdown --repeats 3 > $L/dask-bench.log 2> $L/dask-bench.err; echo "dask bench rc=$?"; head -16 $L/dask-bench.log; tail -2 $L/dask-bench.err); el dask-bench
(cd ${OUT:-/tmp} && tar czf logs.tgz logs && rm -rf logs)
