#!/usr/bin/env bash
# GPU run 2 (two H200s of one host): a batch spread over both GPUs (--device cuda:0,1) against
# one GPU (cuda:0): outputs byte for byte, and the batch's wall time; the package's second-device
# test. NVLink multicast stays off (nothing here uses it).
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg PYTHONUNBUFFERED=1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
o=$OUT
{ date -u; nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv; nproc; } > $o/env2.txt 2>&1
cat $o/env2.txt
# 24 echo-like volumes, 256^3 uint8 (written by the package), smoothed and median-filtered.
mkdir -p /tmp/in /tmp/one /tmp/two /tmp/one_m /tmp/two_m /tmp/one_a /tmp/two_a
python3 - <<'PY'
import numpy as np, ndconv
rng = np.random.default_rng(0)
for i in range(24):
    v = (rng.random((192, 256, 256)) * 255).astype(np.uint8)
    ndconv.write(f"/tmp/in/v{i:02d}.nii", v, spacing=(0.5, 0.5, 0.5))
PY
ls /tmp/in | wc -l
run() { local t0=$(date +%s%N); ./bin/ndconv "$@" > /tmp/log.txt 2>&1; local rc=$?; local t1=$(date +%s%N);
  echo "rc=$rc $(( (t1 - t0) / 1000000 )) ms: ndconv ${1} ... ${@: -3}"; tail -1 /tmp/log.txt; }
for rep in 1 2; do
  rm -f /tmp/one/* /tmp/two/* /tmp/one_m/* /tmp/two_m/* /tmp/one_a/* /tmp/two_a/*
  run smooth /tmp/in/*.nii -o /tmp/one/ --sigma 2vox --device cuda:0
  run smooth /tmp/in/*.nii -o /tmp/two/ --sigma 2vox --device cuda:0,1
  run median /tmp/in/*.nii -o /tmp/one_m/ --radius 2 --device cuda:0
  run median /tmp/in/*.nii -o /tmp/two_m/ --radius 2 --device cuda:all
  run adaptive /tmp/in/v0[0-7].nii -o /tmp/one_a/ --preset echo --device cuda:0
  run adaptive /tmp/in/v0[0-7].nii -o /tmp/two_a/ --preset echo --device cuda:0,1
done
same=0; differ=0
for f in /tmp/one/*; do cmp -s $f /tmp/two/$(basename $f) && same=$((same+1)) || differ=$((differ+1)); done
for f in /tmp/one_m/*; do cmp -s $f /tmp/two_m/$(basename $f) && same=$((same+1)) || differ=$((differ+1)); done
for f in /tmp/one_a/*; do cmp -s $f /tmp/two_a/$(basename $f) && same=$((same+1)) || differ=$((differ+1)); done
echo "outputs byte-identical: $same, differing: $differ"
(cd .. && timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py -k "second_device or concurrent" 2>&1 | grep -E "^E |passed|failed" | head -20)
