#!/usr/bin/env bash
# GPU run 40, the lead's part (one H200; the two-GPU machine was not lent at 13:56): 5c2c826
# (ndconv serve; cohort workers keep one each): the whole GPU suite in 8 shards; the package's GPU,
# CuPy, serve and killed-worker tests; dask_gpu.py cohort on one GPU (kept command lines, a
# command line per task, one per file; its "all workers" entries are the same one GPU).
set -uo pipefail
cd "$(dirname "$0")"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
rm -rf bin lib pkg pyx; tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=$OUT; G=/tmp/leadlogs; rm -rf $G; mkdir -p $G
nvidia-smi --query-gpu=index,name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader; nproc
el "suite, 8 shards"
for i in 0 1 2 3 4 5 6 7; do GTEST_TOTAL_SHARDS=8 GTEST_SHARD_INDEX=$i timeout 240 bin/ndconv_gpu_tests > $G/shard$i.log 2>&1 & done; wait
for i in 0 1 2 3 4 5 6 7; do grep -E "^\[  PASSED  \]|^\[  FAILED  \]|FAILED  \]" $G/shard$i.log | head -4; tail -1 $G/shard$i.log; done; el "suite done"
(cd .. && timeout 80 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py python/tests/test_dask.py -k "gpu or cupy or serve or killed" > $G/pytest.log 2>&1; echo "pytest rc=$?: $(tail -1 $G/pytest.log)")
W=/tmp/cohort; rm -rf $W; mkdir -p $W/in
python3 -c "
import numpy as np, ndconv
rng = np.random.default_rng(1)
for i in range(8):
    ndconv.write(f'/tmp/cohort/in/s{i}.nii', rng.integers(0, 256, (20, 160, 160, 160), dtype=np.uint8), spacing=(0.05, 0.6, 0.6, 0.6))
"
wall() { local s=$(date +%s.%N); "$@" > /tmp/w.log 2>&1; local rc=$?; local e=$(date +%s.%N); awk "BEGIN{printf \"%.3f\", $e - $s}"; [ $rc = 0 ] || echo " (rc $rc: $(tail -1 /tmp/w.log))"; }
el "cohort"
timeout 200 python3 ../python/benchmarks/dask_gpu.py cohort --cli $PWD/bin/ndconv --files 8 --gpus 0 --work /tmp > $L/cohort.txt 2> $G/cohort.err
el "cohort rc=$?"; cat $L/cohort.txt; tail -3 $G/cohort.err
tar czf $L/leadlogs.tgz -C $G . ; el done
