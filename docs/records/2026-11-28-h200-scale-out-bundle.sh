#!/usr/bin/env bash
# Packs what the GPU runs need from build-cuda/ into .device-run/bundle.tar.xz: the stripped
# binaries, the package with its cp312 module, and the ITK libraries they load.
set -euo pipefail
cd "$(dirname "$0")"
rm -rf stage && mkdir -p stage/bin stage/lib stage/pkg
b=../build-cuda
cp $b/src/cli/ndconv $b/tests/gpu/ndconv_gpu_tests stage/bin/
[ -x $b/src/perf/ndconv-perf ] && cp $b/src/perf/ndconv-perf stage/bin/
strip stage/bin/*
cp -r ../python/ndconv stage/pkg/
rm -rf stage/pkg/ndconv/__pycache__ stage/pkg/ndconv/*/__pycache__
cp $b/python/_ndconv*.so stage/pkg/ndconv/
strip stage/pkg/ndconv/_ndconv*.so
bash /work/shared/tools/device-bundle.sh stage/lib stage/bin/ndconv stage/bin/ndconv-perf stage/pkg/ndconv/_ndconv*.so
rm -f stage/lib/libcufft*  # the GPU machine's CUDA toolkit has it (286 MB)
(cd stage && tar cJf ../bundle.tar.xz bin lib pkg)
ls -la bundle.tar.xz
