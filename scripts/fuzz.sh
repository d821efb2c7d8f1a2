#!/usr/bin/env bash
# Builds the libFuzzer targets of ndconv's own parsers (tests/fuzz, clang with AddressSanitizer and
# UndefinedBehaviorSanitizer) in build-fuzz/ and runs each for FUZZ_SECONDS (default 40) from a
# copy of its seed corpus. Fails on the first crash, sanitizer report, timeout (10 s for one input)
# or memory blow-up (2 GiB), leaving the input that caused it in build-fuzz/findings/. Run by
# scripts/test.sh after the test suites; a longer run: FUZZ_SECONDS=3600 bash scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-40}
CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNDCONV_CUDA=OFF -DNDCONV_FUZZ=ON ${NDCONV_FUZZ_CMAKE_ARGS:-} >build-fuzz.configure.log 2>&1 \
  || { cat build-fuzz.configure.log >&2; exit 1; }
cmake --build build-fuzz -j "$(nproc)" --target fuzz_targets
mkdir -p build-fuzz/findings
for target in fuzz_nrrd_header fuzz_metaimage_header fuzz_nifti_header fuzz_gzip fuzz_list_file; do
  work=build-fuzz/corpus/$target
  rm -rf "$work"
  mkdir -p "$work"
  cp tests/fuzz/corpus/$target/* "$work/"
  dict=()
  case $target in
    fuzz_nrrd_header) dict=(-dict=tests/fuzz/nrrd.dict) ;;
    fuzz_metaimage_header) dict=(-dict=tests/fuzz/metaimage.dict) ;;
  esac
  echo "fuzz: $target for ${seconds} s"
  if ! build-fuzz/tests/fuzz/$target "$work" "${dict[@]}" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=2048 -artifact_prefix=build-fuzz/findings/$target- -print_final_stats=1 \
      >build-fuzz/$target.log 2>&1; then
    tail -n 40 build-fuzz/$target.log >&2
    echo "fuzz: $target found a problem; the input is in build-fuzz/findings/" >&2
    exit 1
  fi
  grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' build-fuzz/$target.log | tail -n 1
done
