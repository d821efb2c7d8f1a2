#!/usr/bin/env bash
# GPU run 38 (two H200s): where a command's fixed cost goes on a two-GPU machine, and the batch
# with the probe's devices started at once and the output allocated before the filter's turn.
# x/ndconv-old: the tree of run 37 (3823f13); bin/ndconv: the change.
set -uo pipefail
cd "$(dirname "$0")"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
tar xJf bundle.tar.xz; tar xJf x.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=$OUT; mkdir -p $L
wall() { local s=$(date +%s.%N); "$@" > /tmp/w.log 2>&1; local rc=$?; local e=$(date +%s.%N); awk "BEGIN{printf \"%.3f\", $e - $s}"; [ $rc = 0 ] || echo " (rc $rc: $(tail -1 /tmp/w.log))"; }
el "CUDA start-up, 3 processes each"
for mode in first serial parallel; do
  for i in 1 2 3; do echo "-- $mode $i: wall $(wall x/cuda_devices_start $mode 3700) s"; cat /tmp/w.log | tr '\n' ';'; echo; done
done 2>&1 | tee $L/start.txt
el "files"
W=/tmp/cohort; rm -rf $W; mkdir -p $W/in
python3 -c "
import numpy as np, ndconv
rng = np.random.default_rng(1)
for i in range(8):
    ndconv.write(f'/tmp/cohort/in/s{i}.nii', rng.integers(0, 256, (20, 160, 160, 160), dtype=np.uint8), spacing=(0.05, 0.6, 0.6, 0.6))
"
el "one file, one GPU: old, new, new with only GPU 0 visible; --version"
for i in 1 2 3; do
  echo "version $(wall bin/ndconv --version)"
  for b in x/ndconv-old bin/ndconv; do
    rm -f $W/o1.nii; echo "$b one file $(wall $b adaptive $W/in/s0.nii $W/o1.nii --preset echo --type uint8 --device cuda:0 --verbose)"; grep "timings: read" /tmp/w.log
  done
  rm -f $W/o1.nii; echo "new, CUDA_VISIBLE_DEVICES=0 $(CUDA_VISIBLE_DEVICES=0 wall bin/ndconv adaptive $W/in/s0.nii $W/o1.nii --preset echo --type uint8 --device cuda:0 --verbose)"; grep "timings: read" /tmp/w.log
done 2>&1 | tee $L/one.txt
el "batches"
for round in 1 2; do
  for b in x/ndconv-old bin/ndconv; do
    for dev in 0 0,1; do
      n=$(basename $b)-$round-gpu${dev/,/_}; d=$W/$n; mkdir -p $d
      echo "$n: $(wall $b adaptive $W/in/*.nii -o $d/ --preset echo --type uint8 --device cuda:$dev --verbose) s"
      mkdir -p /tmp/logs; cp /tmp/w.log /tmp/logs/batch-$n.log; grep "timings: read" /tmp/w.log
    done
  done
done 2>&1 | tee $L/batch.txt
for f in $W/ndconv-old-1-gpu0/*; do for o in $W/*-gpu*; do cmp -s $f $o/$(basename $f) || echo "DIFFER $o $(basename $f)"; done; done
el "cohort (new)"
timeout 200 python3 ../python/benchmarks/dask_gpu.py cohort --cli $PWD/bin/ndconv --files 8 --gpus 0,1 --work /tmp > $L/cohort.txt 2> $L/cohort.err
el "cohort rc=$?"; cat $L/cohort.txt; tail -3 $L/cohort.err
tar czf $L/logs.tgz -C /tmp/logs . ; el done
