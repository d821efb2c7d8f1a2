#!/usr/bin/env bash
# GPU run 1b (one H200): after the package's GPU fast path (device addresses, no report): its
# tests again, where the host time of a small call goes, and the benchmark on the idle GPU.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg PYTHONUNBUFFERED=1
o=$OUT
t0=$(date +%s)
(cd .. && timeout 200 python3 -m pytest -q -p no:cacheprovider python/tests > $o/pytest.txt 2>&1); echo "pytest rc=$? at $(( $(date +%s) - t0 )) s"; tail -3 $o/pytest.txt
(cd .. && timeout 120 python3 python/benchmarks/host_overhead.py > $o/host_overhead.txt 2>&1); echo "host rc=$?"; cat $o/host_overhead.txt
(cd .. && timeout 240 python3 python/benchmarks/bench_python.py --gpu --json $o/bench-python-gpu.json > $o/bench.txt 2>&1); echo "bench rc=$? at $(( $(date +%s) - t0 )) s"
cat $o/bench.txt
