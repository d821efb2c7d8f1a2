#!/usr/bin/env bash
# Installs what ndconv needs from Debian 12's packages (when run as root and something is
# missing), then configures and builds ndconv in build/: everything, or only the targets named
# (e.g. `scripts/setup.sh ndconv`). The CUDA toolkit is used when nvcc is found (PATH or
# /usr/local/cuda); without it ndconv builds CPU-only.
# Used by scripts/demo.sh and scripts/test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# libfftw3-dev: ITK's FFT module links FFTW, and libinsighttoolkit5-dev only recommends it (the
# install below skips recommendations), so a new machine failed to link without it.
# nlohmann-json3-dev: the JSON of `ndconv sweep` and `ndconv bench` (src/perf).
# python3-dev, python3-venv: the Python package's module and its virtual environment
# (scripts/python.sh).
# clang, libclang-rt-14-dev: the libFuzzer targets and their sanitizers (scripts/fuzz.sh); clang
# only recommends the runtime, which the install below would skip.
packages=(cmake ninja-build g++ pkg-config libinsighttoolkit5-dev libfftw3-dev libcli11-dev
  nlohmann-json3-dev googletest libgtest-dev libdeflate-dev zlib1g-dev clang libclang-rt-14-dev python3-dev
  python3-venv)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    echo "setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release ${NDCONV_CMAKE_ARGS:-} >build.configure.log 2>&1 \
  || { cat build.configure.log >&2; exit 1; }
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
