#!/usr/bin/env bash
# Builds the io test suites with AddressSanitizer and UndefinedBehaviorSanitizer (GCC, CPU only) in
# build-asan/ and runs them: the readers, writers and header checks under the sanitizers on every
# hostile file the suites generate. Run by scripts/test.sh after the test suites.
set -euo pipefail
cd "$(dirname "$0")/.."
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNDCONV_CUDA=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  ${NDCONV_SANITIZE_CMAKE_ARGS:-} >build-asan.configure.log 2>&1 \
  || { cat build-asan.configure.log >&2; exit 1; }
suites=(ndconv_io_tests ndconv_formats_tests ndconv_stored_read_tests ndconv_deflate_tests)
targets=()
for s in "${suites[@]}"; do targets+=(--target "$s"); done
cmake --build build-asan -j "$(nproc)" "${targets[@]}"
# Leaks are reported too; ITK's factories keep their registrations until exit by design.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
for s in "${suites[@]}"; do
  echo "sanitize: $s"
  build-asan/tests/io/$s --gtest_brief=1
done
