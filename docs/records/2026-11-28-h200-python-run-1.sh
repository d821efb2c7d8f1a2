#!/usr/bin/env bash
# GPU run 1 (one H200): the GPU suites, the Python package's tests (CPU and GPU) and
# compute-sanitizer memcheck on its GPU tests, all at once; then the package's benchmark alone on
# the idle GPU. Binaries built on the development machine (sm_90), carried in bundle.tar.xz.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg PYTHONUNBUFFERED=1
o=$OUT
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv;
  nvcc --version 2>/dev/null | tail -2; nproc; python3 --version;
  python3 -c "import numpy, scipy, cupy, torch; print('numpy', numpy.__version__, 'scipy', scipy.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)"; } > $o/env.txt 2>&1
cat $o/env.txt
t0=$(date +%s)
timeout 400 ./bin/ndconv_gpu_tests --gtest_brief=1 > $o/gpu_tests.txt 2>&1 & p1=$!
(cd .. && timeout 400 python3 -m pytest -q -p no:cacheprovider -o addopts="" python/tests > $o/pytest.txt 2>&1) & p2=$!
(cd .. && timeout 400 compute-sanitizer --tool memcheck --error-exitcode 9 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py > $o/memcheck.txt 2>&1) & p3=$!
for p in $p1 $p2 $p3; do wait $p; echo "job $p rc=$? at $(( $(date +%s) - t0 )) s"; done
echo "== gpu tests"; grep -E '^\[  (PASSED|FAILED|SKIPPED) |FAILED' $o/gpu_tests.txt | tail -8
echo "== pytest"; tail -4 $o/pytest.txt
echo "== memcheck"; grep -E 'ERROR SUMMARY|passed|failed' $o/memcheck.txt | tail -3
(cd .. && timeout 240 python3 python/benchmarks/bench_python.py --gpu --json $o/bench-python-gpu.json > $o/bench.txt 2>&1); echo "bench rc=$? at $(( $(date +%s) - t0 )) s"
cat $o/bench.txt
