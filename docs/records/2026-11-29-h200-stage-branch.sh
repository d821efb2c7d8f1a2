#!/usr/bin/env bash
# stage-branch.sh NAME COMMIT [cuda|cpu]: builds COMMIT in /work/rb-NAME (a detached worktree) and
# copies its stripped GPU test/bench binaries into .device-run/rN/NAME (RUN env var).
set -euo pipefail
name=$1 commit=$2 kind=${3:-cuda}
export CCACHE_BASEDIR=/work CCACHE_DIR=/work/.ccache
wt=/work/rb-$name
cd /work/main
if [ -d $wt ]; then (cd $wt && git checkout -q --detach $commit); else git worktree add -q --detach $wt $commit; fi
cd $wt
if [ $kind = cuda ]; then
  [ -f build-cuda/build.ninja ] || cmake -S . -B build-cuda -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DNDCONV_PYTHON=OFF -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache > /dev/null
  nice cmake --build build-cuda -j2 --target ndconv_gpu_tests ndconv-perf > /tmp/stage-$name.log 2>&1 || { tail -20 /tmp/stage-$name.log; exit 1; }
  b=build-cuda
else
  [ -f build/build.ninja ] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DNDCONV_CUDA=OFF \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache > /dev/null
  nice cmake --build build -j2 --target ndconv_engine_tests ndconv-perf > /tmp/stage-$name.log 2>&1 || { tail -20 /tmp/stage-$name.log; exit 1; }
  b=build
fi
out=/work/main/.device-run/$RUN/$name
mkdir -p $out
for f in $b/tests/gpu/ndconv_gpu_tests $b/tests/engine/ndconv_engine_tests $b/src/perf/ndconv-perf; do [ -x $f ] && cp $f $out/; done
strip $out/* 2>/dev/null || true
echo "$name $commit staged: $(ls $out | tr '\n' ' ')"
