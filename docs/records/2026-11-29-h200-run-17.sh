#!/usr/bin/env bash
# GPU run 17 (one H200): the merged tree (main with adaptive-memory, tensor-bank, memory-floor,
# amx-bank): the whole GPU suite in 3 shards at once, the bench rows of the new kernels, the CPU
# rows on the Xeon, the package's GPU tests, memcheck and racecheck over the new kernels' tests.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
for i in 0 1 2; do GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 240 bin/ndconv_gpu_tests > /tmp/shard$i.log 2>&1 & done; wait
for i in 0 1 2; do grep -E "^\[  PASSED  \]|^\[  FAILED  \]|tests ran|SKIPPED \]" /tmp/shard$i.log | grep -v "^\[  SKIPPED \] [A-Z]" | head -12; grep -B2 -A6 "Failure" /tmp/shard$i.log | head -30; done; el suite
timeout 90 bin/ndconv-perf bench --workload bank_3d,bank_3d_tc,gauss3d_s2,gauss3d_s2_272,median3d_r1 --quick --json /tmp/bench.json 2>&1 | grep -v "^\[" | tail -14; el bench
timeout 60 bin/ndconv-perf bench --device cpu --workload cpu3d_7,cpu_bank_3d,cpu_bank_3d_u8 --call-reps 7 2>&1 | grep -E "^cpu|workload"; el cpu
timeout 100 python3 ../python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 2> /tmp/a.err | tr -d '\n' ; echo; el "dask arrays"
(cd .. && timeout 100 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py python/tests/test_dask.py -k "gpu or cupy or Gpu or cuda" 2>&1 | tail -3); el pytest
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*:CudaSlab.NanStaysInsideTheFootprint:MedianDeviceGpu.MatchesReferenceAndCpuBitForBit' 2>&1 | tail -2; echo "memcheck rc=${PIPESTATUS[0]}"; el memcheck
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*:CudaSlab.NanStaysInsideTheFootprint' 2>&1 | tail -2; echo "racecheck rc=${PIPESTATUS[0]}"; el racecheck
