#!/usr/bin/env bash
# GPU run 19 (one H200): tc-4d, dask-graph, the median kernel's register budget (main with
# __launch_bounds__ min blocks 6 and 8 for the sorted planes), cpu-dense on the host Xeon.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz && tar xJf r19.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels-lite/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PYTHONUNBUFFERED=1
L=${OUT:-/tmp}; t0=$(date +%s); el() { echo "--- $1 at $(( $(date +%s) - t0 )) s"; }
echo "=== median (main, min blocks 6, 8)"
for p in bin/ndconv-perf r19/median/ndconv-perf-6 r19/median/ndconv-perf-8; do timeout 40 $p bench --workload median3d_r1 --quick 2>&1 | grep -E "^median"; done; el median
echo "=== tc-4d"
timeout 150 r19/tc/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*:GpuTensorCoreBank.TheAdaptiveFilterOn8BitInput*:GpuBank.AdaptiveFilterOnTheDeviceInSlabs:GpuBank.AdaptiveFilterFallsBackToHostStagesUnderAMemoryCap' > $L/tc-tests.log 2>&1; grep -E '^\[ *(OK|FAILED|PASSED|adaptive)|Failure' -A2 $L/tc-tests.log | head -20; el tc-tests
timeout 90 r19/tc/ndconv-perf bench --workload bank_4d_tc,adaptive_4d --quick > $L/tc-bench.log 2>&1; grep -vE "^\[|^measuring" $L/tc-bench.log | cut -c1-300 | tail -8; el tc-bench
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 9 r19/tc/ndconv_gpu_tests --gtest_filter='GpuTensorCoreBank.EqualsTheHostEmulation*' 2>&1 | tail -2; echo "racecheck rc=${PIPESTATUS[0]}"; el tc-racecheck
echo "=== dask-graph"
cp pkg/ndconv/_ndconv*.so r19/dask/python/ndconv/
(cd r19/dask && PYTHONPATH=$PWD/python:$OLDPWD/pyx timeout 120 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k 'cupy or gather or widened' > $L/dask-tests.log 2>&1; tail -3 $L/dask-tests.log); el dask-tests
(cd r19/dask && PYTHONPATH=$PWD/python:$OLDPWD/pyx timeout 150 python3 python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 --breakdown --repeats 5 > $L/dask-bench.log 2> $L/dask-bench.err; tail -45 $L/dask-bench.log; tail -3 $L/dask-bench.err); el dask-bench
echo "=== Xeon: main, cpu-dense"
timeout 40 bin/ndconv-perf bench --device cpu --workload cpu3d_7 --call-reps 7 2>&1 | grep -E "^cpu"
timeout 40 r19/dense/ndconv-perf bench --device cpu --workload cpu3d_7 --call-reps 7 2>&1 | grep -E "^cpu"; el cpu
echo "=== fft"
timeout 120 r19/fft/ndconv_gpu_tests --gtest_filter='CudaFft.*' 2>&1 | grep -E "FAILED|PASSED|Failure|Expected|actual" | tail -8; el fft-tests
timeout 120 r19/fft/ndconv-perf bench --workload fft3d_11,fft3d_15,fft3d_21,dense3d_11 --quick --json $L/fft.json > $L/fft-bench.log 2>&1; grep -v "^\[" $L/fft-bench.log | grep -E "^fft|^dense|auto:|repeat \(|first \(" | grep -v "out of place" | cut -c1-240 | head -30
python3 -c "
import json; d=json.load(open('$L/fft.json'))
for r in d.get('rows', d.get('workloads', [])):
    p=r.get('paths',{}); print(r.get('workload'), {k:(v.get('first_validation_launch_ms'), v.get('first_launch_ms')) for k,v in p.items() if isinstance(v,dict)})
" 2>&1 | head -8; el fft-bench
