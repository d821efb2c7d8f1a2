#!/usr/bin/env bash
# GPU run 37 (two H200s of one host): every two-GPU row of issue 46 on the current tree.
# 1. the machine: GPUs, links, driver; the two-GPU tests of the suite and of the package;
# 2. one volume over two GPUs (multi_gpu.py: dense 7^4, pinned 4D float32, whole calls);
# 3. the adaptive cohort (8 series 20 x 160^3 uint8): the command line's batch on 1 and 2 GPUs,
#    twice each, interleaved, with --verbose (each job's read/filter/write timings);
# 4. the same files through filter_files on LocalCUDACluster, 1 worker against 2.
# Logs under $OUT, packed after each step.
set -uo pipefail
cd "$(dirname "$0")"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1; el "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=$OUT; mkdir -p $L
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv
nvidia-smi topo -m; nproc; free -g | head -2
el "suite CudaDevices"
timeout 120 bin/ndconv_gpu_tests --gtest_filter='CudaDevices.*:GpuSlabs.*' > $L/suite-devices.log 2>&1; el "rc=$?"
grep -E "^\[  PASSED|^\[  FAILED|FAILED \]" $L/suite-devices.log | head
(cd .. && timeout 90 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py > $L/pytest-gpu.log 2>&1; echo "pytest gpu rc=$?"; tail -2 $L/pytest-gpu.log)
el "multi_gpu"
for shape in 20x160x160x160 40x160x160x160; do
  timeout 120 python3 ../python/benchmarks/multi_gpu.py --devices cuda:0,1 --shape $shape > $L/multi-$shape.json 2> $L/multi-$shape.err
  el "multi $shape rc=$?"; cat $L/multi-$shape.json; tail -2 $L/multi-$shape.err
done
el "cohort files"
W=/tmp/cohort; rm -rf $W; mkdir -p $W/in
python3 - <<'PY'
import numpy as np, ndconv
rng = np.random.default_rng(1)
for i in range(8):
    ndconv.write(f"/tmp/cohort/in/s{i}.nii", rng.integers(0, 256, (20, 160, 160, 160), dtype=np.uint8),
                 spacing=(0.05, 0.6, 0.6, 0.6))
PY
el "files written"; ls -la $W/in | head -3
for round in 1 2; do
  for dev in cuda:0 cuda:0,1; do
    d=$W/out-$round-${dev/:/}; d=${d/,/_}; mkdir -p $d
    s=$(date +%s.%N)
    timeout 60 ndconv adaptive $W/in/*.nii -o $d/ --preset echo --type uint8 --device $dev --verbose > $L/batch-$round-${dev/:/}.log 2>&1
    rc=$?; e=$(date +%s.%N)
    el "batch $round $dev rc=$rc $(awk "BEGIN{print $e - $s}") s"
    grep -E "timings|plan:|batch:" $L/batch-$round-${dev/:/}.log | head -20
  done
done
for f in $W/out-1-cuda0/*; do cmp -s $f $W/out-2-cuda0_1/$(basename $f) || echo "DIFFER $f"; done
el "cohort bench"
timeout 200 python3 ../python/benchmarks/dask_gpu.py cohort --cli $PWD/bin/ndconv --files 8 --gpus 0,1 --work /tmp > $L/cohort.txt 2> $L/cohort.err
el "cohort rc=$?"; cat $L/cohort.txt; tail -5 $L/cohort.err
el "done"
