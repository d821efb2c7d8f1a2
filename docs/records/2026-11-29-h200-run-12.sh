#!/usr/bin/env bash
# GPU run 12 (one H200): where ndconv.dask's time goes on CuPy chunks (the halo graph without the
# filter, the filter of every block), and the adaptive cohort on one GPU: the command line's batch
# against LocalCUDACluster's one worker, its tasks a few files each and one file each.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
cp ../python/ndconv/dask/*.py pkg/ndconv/dask/
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
t0=$(date +%s)
timeout 150 python3 ../python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 2> /tmp/a.err; echo "arrays rc=$? at $(( $(date +%s) - t0 )) s"; tail -3 /tmp/a.err
timeout 300 python3 ../python/benchmarks/dask_gpu.py cohort --cli bin/ndconv --files 8 --gpus 0 --work /tmp 2> /tmp/c.err; echo "cohort rc=$? at $(( $(date +%s) - t0 )) s"; grep -v INFO /tmp/c.err | tail -5
