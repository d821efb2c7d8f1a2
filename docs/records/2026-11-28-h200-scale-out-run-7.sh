#!/usr/bin/env bash
# GPU run 7 (two H200s): one volume over both GPUs, dense 7^4 on 4D float32 volumes in pinned host
# memory, whole calls, against the first GPU alone; the copy rates of each GPU alone and both at
# once; then the package's GPU tests (the device-list test included).
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
t0=$(date +%s)
nvidia-smi topo -m 2>&1 | head -4
for shape in 20x160x160x160 64x128x128x128; do
  timeout 150 python3 ../python/benchmarks/multi_gpu.py --devices cuda:0,1 --shape $shape 2>&1
  echo "rc=$? at $(( $(date +%s) - t0 )) s"
done
(cd .. && timeout 150 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py 2>&1 | tail -3)
echo "done at $(( $(date +%s) - t0 )) s"
