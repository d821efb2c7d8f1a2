#!/usr/bin/env bash
# Lead's part of round 1 (one H200): last session's unverified changes (CudaSeparableBits with the
# stream plan checked as its own plan; plan_one_pass shared by slab and stream plans), the
# adaptive stages' GPU tests, and ndconv.dask's two-pass adaptive filter against the whole call.
set -uo pipefail
cd "$(dirname "$0")"
rm -rf bin lib pkg pyx && tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels-lite/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=${OUT:-/tmp}/lead; mkdir -p $L; t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
F='CudaSeparableBits.*:CudaStream.*:CudaSlab*:GpuBank.Adaptive*:GpuTensorCoreBank.*'
timeout 150 bin/ndconv_gpu_tests --gtest_filter="$F" > $L/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  PASSED  \]|^\[  FAILED  \]|^\[==========\]" $L/tests.log | head -8; grep -B2 -A6 "Failure" $L/tests.log | head -16; el tests
(cd .. && timeout 200 python3 python/benchmarks/dask_gpu.py adaptive --chunks 1,2,4 --repeats 3 > $L/dask-adaptive.log 2> $L/dask-adaptive.err; echo "dask adaptive rc=$?"; cat $L/dask-adaptive.log; tail -3 $L/dask-adaptive.err); el dask-adaptive
(cd ${OUT:-/tmp} && tar czf lead.tgz lead && rm -rf lead)
