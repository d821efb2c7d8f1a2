#!/usr/bin/env bash
# GPU run 6 (two H200s): one volume over both GPUs (dense 7^4 on 4D volumes in pinned host
# memory), the adaptive cohort as a CLI batch and on dask-cuda's LocalCUDACluster (1 worker
# against 2), ndconv.dask against dask-image + cupyx (Gaussian sigma 2, 1024^3); then the GPU suite,
# memcheck over the multi-GPU tests, and the package's GPU and dask tests.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > $OUT/pip.txt 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT
t0=$(date +%s)
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv > $o/gpus.txt; cat $o/gpus.txt
nvidia-smi topo -m > $o/topo.txt 2>&1
python3 -c "import numpy, cupy, dask, distributed, dask_cuda, dask_image; print('numpy', numpy.__version__, 'cupy', cupy.__version__, 'dask', dask.__version__, 'distributed', distributed.__version__, 'dask_cuda', dask_cuda.__version__, 'dask_image', dask_image.__version__)"
echo "== one volume over GPUs"
for shape in 20x160x160x160 64x128x128x128; do
  timeout 150 python3 ../python/benchmarks/multi_gpu.py --devices cuda:0,1 --shape $shape > $o/multi_gpu_$shape.json 2> $o/multi_gpu_$shape.err
  echo "rc=$? at $(( $(date +%s) - t0 )) s"; cat $o/multi_gpu_$shape.json; tail -3 $o/multi_gpu_$shape.err
done
echo "== dask arrays: ndconv.dask vs dask-image + cupyx"
timeout 200 python3 ../python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 > $o/dask_arrays.json 2> $o/dask_arrays.err
echo "rc=$? at $(( $(date +%s) - t0 )) s"; cat $o/dask_arrays.json; tail -3 $o/dask_arrays.err
echo "== cohort: CLI batch and LocalCUDACluster"
timeout 300 python3 ../python/benchmarks/dask_gpu.py cohort --cli $PWD/bin/ndconv --files 8 --gpus 0,1 --work /tmp > $o/dask_cohort.json 2> $o/dask_cohort.err
echo "rc=$? at $(( $(date +%s) - t0 )) s"; cat $o/dask_cohort.json; tail -5 $o/dask_cohort.err
echo "== GPU suite"
timeout 300 ./bin/ndconv_gpu_tests --gtest_brief=1 > $o/gpu_tests.txt 2>&1; echo "gpu tests rc=$? at $(( $(date +%s) - t0 )) s"
grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED' $o/gpu_tests.txt | tail -8
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 ./bin/ndconv_gpu_tests --gtest_brief=1 \
  --gtest_filter='CudaDevices.*:ChunkPlan.*:CudaPipeline.*' > $o/memcheck.txt 2>&1
echo "memcheck rc=$? at $(( $(date +%s) - t0 )) s"; grep -E 'ERROR SUMMARY|PASSED|FAILED' $o/memcheck.txt | tail -3
(cd .. && timeout 240 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py python/tests/test_dask.py 2>&1 | tail -4)
echo "done at $(( $(date +%s) - t0 )) s"
