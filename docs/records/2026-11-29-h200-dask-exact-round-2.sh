#!/usr/bin/env bash
# dask-exact round 2 (commit in READY): every GPU plan of a separable filter gives the same bits
# (CudaSeparableBits, never reached in round 1), the slab kernel against the float64 reference,
# the adaptive filter's GPU stages with a given scale and scales over block interiors
# (GpuBank.Adaptive*), ndconv.dask on CuPy chunks (test_dask.py -k cupy: the Gaussian and the
# blockwise adaptive filter), the 1024^3 dask benchmark (bit-identity), main's and the branch's
# slab sweeps at 272^3 in one run, and whether the CPU's Gaussian equals the GPU's bit for bit.
set -uo pipefail
D=$(cd "$(dirname "$0")" && pwd)
L=${L:-${OUT:-/tmp}/dask-exact}; mkdir -p "$L"
t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
F='CudaSeparableBits.*:CudaSlab.LargeVolumesDenseAndStrided:CudaSlab.ColumnPassesWhereTheirTilesAreWhole:CudaSlab.NanStaysInsideTheFootprint:GpuBank.Adaptive*:GpuAdaptiveResident.*'
timeout 45 "$D/bin/ndconv_gpu_tests" --gtest_filter="$F" > "$L/tests.log" 2>&1; echo "tests rc=$?"
grep -E "^\[  PASSED  \]|^\[  FAILED  \]|^\[       OK \]" "$L/tests.log" | cut -c1-110 | head -16; grep -A8 "Failure" "$L/tests.log" | head -24; el tests
# Python: the package (cp312 module of a CUDA build) and dask's wheels; dask.distributed is not
# carried (size): a stub lets test_dask.py import, and only its CuPy tests run (no cluster).
mkdir -p "$D/pyx" "$D/stub/distributed"
timeout 60 pip install --quiet --no-deps --no-index --target "$D/pyx" "$D"/wheels/*.whl > "$L/pip.log" 2>&1; echo "wheels rc=$?"
echo '"""Stub: the CuPy tests of test_dask.py use no cluster."""' > "$D/stub/distributed/__init__.py"
export PYTHONPATH="$D/pkg:$D/pyx:$D/stub" PYTHONUNBUFFERED=1
(cd "$D" && timeout 60 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k cupy -rs > "$L/dask-tests.log" 2>&1; echo "dask tests rc=$?"; tail -3 "$L/dask-tests.log"; grep -E "^E |FAILED" "$L/dask-tests.log" | head -10); el dask-tests
(cd "$D" && timeout 60 python3 python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 --repeats 5 > "$L/dask-bench.log" 2> "$L/dask-bench.err"; echo "dask bench rc=$?"; head -16 "$L/dask-bench.log"; tail -2 "$L/dask-bench.err"); el dask-bench
timeout 20 python3 -c "
import numpy as np, ndconv
from ndconv import ndimage
a = np.random.default_rng(5).random((96, 100, 272), dtype=np.float32)
for s in (0.8, 2.0):
    c = ndimage.gaussian_filter(a, s, device='cpu'); g = ndimage.gaussian_filter(a, s, device='cuda')
    print('sigma', s, 'CPU == GPU bit for bit:', np.array_equal(c, g), 'max |diff|', float(np.abs(c - g).max()))
" 2>&1 | tail -3; el cpu-gpu
for v in main272 branch272; do
  timeout 15 "$D/bin/slab_sweep_$v" > "$L/sweep_$v.log" 2>&1; echo "sweep $v rc=$?"; cut -c1-100 "$L/sweep_$v.log" | head -12
done; el sweeps
