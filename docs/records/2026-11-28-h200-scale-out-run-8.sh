#!/usr/bin/env bash
# GPU run 8 (one H200): the FFT path (its GPU suite, memcheck and racecheck, the dense suites the
# automatic choice touches, the bench's fft rows with dense3d_11 as the direct reference), then
# ndconv.dask against dask-image + cupyx with the one-task-per-block halo graph, and the dask
# tests on CuPy chunks. Logs packed into $OUT/logs.tgz after each step.
set -uo pipefail
cd "$(dirname "$0")"
tar xJf bundle.tar.xz
pip install --quiet --no-deps --no-index --target $PWD/pyx wheels/*.whl > /dev/null 2>&1; echo "wheels rc=$?"
export PATH=$PWD/bin:$PATH LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-} PYTHONPATH=$PWD/pkg:$PWD/pyx PYTHONUNBUFFERED=1
L=/tmp/logs; mkdir -p $L
pack() { tar czf $OUT/logs.tgz -C $L . ; }
t0=$(date +%s)
sed -e 's/timeout 300 "\$tests"/timeout 100 "$tests"/; s/timeout 240 compute-sanitizer/timeout 100 compute-sanitizer/; s/timeout 400 "\$tests"/timeout 110 "$tests"/; s/timeout 500 "\$perf"/timeout 170 "$perf"/' fft-run.sh > fft-run-capped.sh
OUT=$L/fft TESTS=bin/ndconv_gpu_tests PERF=bin/ndconv-perf bash fft-run-capped.sh 2>&1 | tail -30
echo "fft done at $(( $(date +%s) - t0 )) s"; pack
timeout 90 python3 ../python/benchmarks/dask_gpu.py arrays --size 1024 --chunk 256 > $L/dask_arrays.json 2> $L/dask_arrays.err
echo "dask arrays rc=$? at $(( $(date +%s) - t0 )) s"; cat $L/dask_arrays.json; tail -3 $L/dask_arrays.err; pack
(cd .. && timeout 60 python3 -m pytest -q -p no:cacheprovider python/tests/test_dask.py -k "cupy" 2>&1 | tail -3)
(cd .. && timeout 60 python3 -m pytest -q -p no:cacheprovider python/tests/test_gpu.py 2>&1 | tail -3)
echo "done at $(( $(date +%s) - t0 )) s"; pack
