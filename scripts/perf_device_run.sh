#!/usr/bin/env bash
# The study and the bench in one batch on a GPU machine without ITK: build ndconv-perf (unless a
# working binary is given; the build needs CMake, the CUDA toolkit and nlohmann-json3-dev), record
# the GPU, run the quick sweep, the study sweep and the block-shape sweep (the tiled kernel's
# other compiled shapes on a few 2D/3D problems) and the bench with its peers (scripts/peers.py:
# CuPy and PyTorch on the same GPU in the same run). Everything lands in OUTDIR:
#   env.txt (nvidia-smi, versions), quick.csv, sweep.csv, sweep.json, blockshapes.csv,
#   blockshapes.json, bench.json, peers.json, log.txt
# The figures and tables of docs/study.md then come from scripts/plot_study.py OUTDIR/sweep.csv
# and scripts/perf_tables.py study OUTDIR/sweep.json; docs/performance.md's table from
# scripts/perf_tables.py bench OUTDIR/peers.json.
# SKIP_PEERS=1 leaves out the bench and its peers (the study alone: about 2 minutes on an H100
# after the build).
#
# usage: [SKIP_PEERS=1] scripts/perf_device_run.sh OUTDIR [NDCONV_PERF_BINARY] [STUDY_TIMEOUT_S]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: $0 OUTDIR [binary] [study timeout s]}
bin=${2:-}
study_timeout=${3:-300}
mkdir -p "$out"
exec > >(tee -a "$out/log.txt") 2>&1
export PYTHONUNBUFFERED=1

if [[ -z $bin ]] || ! "$bin" --help >/dev/null 2>&1; then
  echo "== building ndconv-perf"
  cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_WITH_ITK=OFF \
    -DNDCONV_BUILD_TESTS=OFF -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.txt" 2>&1 \
    || { cat "$out/configure.txt"; exit 1; }
  grep "ndconv-perf) off" "$out/configure.txt" && exit 1  # says what is missing
  rm -f "$out/configure.txt"
  cmake --build build-dev -j"$(nproc)" --target ndconv-perf || exit 1
  bin=build-dev/src/perf/ndconv-perf
fi

{
  date -u
  nvidia-smi
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv
  nvcc --version 2>/dev/null | tail -2
  python3 -c 'import torch, cupy; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "cupy", cupy.__version__)'
  nproc
} >"$out/env.txt" 2>&1
cat "$out/env.txt"

echo "== quick sweep (under a minute)"
start=$(date +%s)
"$bin" sweep --quick --csv "$out/quick.csv" --json "$out/quick.json" --force
echo "quick sweep rc=$? in $(($(date +%s) - start)) s"
rm -f "$out/quick.json"

echo "== study sweep"
start=$(date +%s)
timeout "$study_timeout" "$bin" sweep --csv "$out/sweep.csv" --json "$out/sweep.json" --force \
  --check-budget 1e10
echo "study sweep rc=$? in $(($(date +%s) - start)) s"

echo "== block-shape sweep (tiled TX 8 4x32 and 128x1, TX 16 2x64)"
start=$(date +%s)
timeout "$study_timeout" "$bin" sweep --block-shapes --volumes 4096x4096,256x256x256 \
  --filters 5,11,17 --csv "$out/blockshapes.csv" --json "$out/blockshapes.json" --force \
  --check-budget 1e10
echo "block-shape sweep rc=$? in $(($(date +%s) - start)) s"

if [[ ${SKIP_PEERS:-0} == 1 ]]; then
  ls -la "$out"
  exit 0
fi

echo "== bench and peers"
start=$(date +%s)
python3 scripts/peers.py --ndconv "$bin" --out "$out/peers.json" --bench-json "$out/bench.json"
echo "peers rc=$? in $(($(date +%s) - start)) s"
ls -la "$out"
