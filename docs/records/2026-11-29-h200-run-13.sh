#!/usr/bin/env bash
# GPU run 13 (one H200): copy_boxes_device (its GPU test, memcheck), ndconv.dask's halo graph
# through it (the dask tests on CuPy chunks, the arrays benchmark), and a CuPy gaussian_filter
# call's wall time against its GPU time.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
t0=$(date +%s)
timeout 60 bin/ndconv_gpu_tests --gtest_filter='CudaBoxCopy.*:DeviceEntryPoints.*' 2>&1 | tail -4
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 bin/ndconv_gpu_tests --gtest_filter='CudaBoxCopy.*' 2>&1 | tail -3; echo "memcheck rc=${PIPESTATUS[0]}"
(cd .. && timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k "cupy" 2>&1 | tail -2)
timeout 150 python3 ../python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 2> /tmp/a.err; echo "arrays rc=$? at $(( $(date +%s) - t0 )) s"; tail -3 /tmp/a.err
timeout 60 python3 call_cost.py  # docs/records/2026-11-29-h200-call-cost.py 2>&1 | tail -8
echo "done at $(( $(date +%s) - t0 )) s"
