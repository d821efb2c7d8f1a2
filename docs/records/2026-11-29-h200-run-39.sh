#!/usr/bin/env bash
# GPU run 39 (two H200s): b3864dc (the probe starts no device; the device list warmed up; outputs
# allocated before the GPU's turn) against 382313f (x/ndconv-old): the two-GPU suite tests, one
# file, the adaptive batch on 1 and 2 GPUs, the LocalCUDACluster cohort; one dense 7^4 volume
# over 2 GPUs through the command line (--verbose: each slab's upload, compute, download) and
# multi_gpu.py at 20, 24, 32 and 40 frames.
set -uo pipefail
cd "$(dirname "$0")"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
tar xJf bundle.tar.xz; tar xJf x.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=$OUT; mkdir -p $L /tmp/logs
wall() { local s=$(date +%s.%N); "$@" > /tmp/w.log 2>&1; local rc=$?; local e=$(date +%s.%N); awk "BEGIN{printf \"%.3f\", $e - $s}"; [ $rc = 0 ] || echo " (rc $rc: $(tail -1 /tmp/w.log))"; }
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
el "suite: devices, slabs, caches, the no-device path, pipelines"
timeout 150 bin/ndconv_gpu_tests --gtest_filter='CudaDevices.*:GpuSlabs.*:CudaBufferCaches.*:CudaNoDevice*:*Probe*:CudaPipeline.*:GpuAdaptiveResident*' > /tmp/logs/suite.log 2>&1; el "suite rc=$?"
grep -E "^\[  PASSED|^\[  FAILED|FAILED  \]|tests ran" /tmp/logs/suite.log | head
(cd .. && timeout 100 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py > /tmp/logs/pytest-gpu.log 2>&1; echo "pytest test_gpu rc=$?: $(tail -1 /tmp/logs/pytest-gpu.log)")
W=/tmp/cohort; rm -rf $W; mkdir -p $W/in
python3 -c "
import numpy as np, ndconv
rng = np.random.default_rng(1)
for i in range(8):
    ndconv.write(f'/tmp/cohort/in/s{i}.nii', rng.integers(0, 256, (20, 160, 160, 160), dtype=np.uint8), spacing=(0.05, 0.6, 0.6, 0.6))
for t in (20, 40):
    ndconv.write(f'/tmp/cohort/v{t}.nii', rng.random((t, 160, 160, 160), dtype=np.float32))
ndconv.write('/tmp/cohort/k7.nii', rng.random((7, 7, 7, 7), dtype=np.float32))
"
el "one file, one GPU (3 rounds: old, new; --version)"
for i in 1 2 3; do
  echo "version old $(wall x/ndconv-old --version) new $(wall bin/ndconv --version)"
  for b in x/ndconv-old bin/ndconv; do
    rm -f $W/o1.nii; echo "$b one file $(wall $b adaptive $W/in/s0.nii $W/o1.nii --preset echo --type uint8 --device cuda:0 --verbose)"; grep "timings: read" /tmp/w.log
  done
done 2>&1 | tee $L/one.txt
el "batches (new; old once)"
for round in 1 2 3; do
  for dev in 0 0,1; do
    n=new-$round-gpu${dev/,/_}; d=$W/$n; mkdir -p $d
    echo "$n: $(wall bin/ndconv adaptive $W/in/*.nii -o $d/ --preset echo --type uint8 --device cuda:$dev --verbose) s"
    cp /tmp/w.log /tmp/logs/batch-$n.log; grep "timings: read" /tmp/w.log | sed 's/^/  /'
  done
done 2>&1 | tee $L/batch.txt
for dev in 0 0,1; do n=old-gpu${dev/,/_}; mkdir -p $W/$n; echo "$n: $(wall x/ndconv-old adaptive $W/in/*.nii -o $W/$n/ --preset echo --type uint8 --device cuda:$dev) s"; done 2>&1 | tee -a $L/batch.txt
for f in $W/old-gpu0/*; do for o in $W/new-* $W/old-gpu0_1; do cmp -s $f $o/$(basename $f) || echo "DIFFER $o $(basename $f)"; done; done | tee -a $L/batch.txt
el "one volume, dense 7^4, through the command line"
for t in 20 40; do for dev in 0 0,1 0 0,1; do
  rm -f $W/c.nii; echo "v$t cuda:$dev $(wall bin/ndconv convolve $W/v$t.nii $W/k7.nii $W/c.nii --boundary zero --device cuda:$dev --verbose)"; grep -E "timings: read|slabs|chunks|pipeline" /tmp/w.log | sed 's/^/  /'
done; done 2>&1 | tee $L/volume.txt
el "multi_gpu.py"
for t in 20 24 32 40; do
  timeout 60 python3 ../python/benchmarks/multi_gpu.py --devices cuda:0,1 --shape ${t}x160x160x160 > /tmp/logs/multi-$t.json 2>&1
  echo "frames $t: $(python3 -c "import json;d=json.load(open('/tmp/logs/multi-$t.json'));print(d['one_gpu_ms'], d['many_gpus_ms'], d['speedup'], d['bit_identical'], d['copy_rates']['up_all_GBps'])" 2>&1)"
done 2>&1 | tee $L/multi.txt
el "cohort (new)"
timeout 200 python3 ../python/benchmarks/dask_gpu.py cohort --cli $PWD/bin/ndconv --files 8 --gpus 0,1 --work /tmp > $L/cohort.txt 2> /tmp/logs/cohort.err
el "cohort rc=$?"; cat $L/cohort.txt; tail -3 /tmp/logs/cohort.err
tar czf $L/logs.tgz -C /tmp/logs . ; el done
