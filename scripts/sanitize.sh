#!/usr/bin/env bash
# Builds the io and CLI test suites and the `ndconv` binary they run with AddressSanitizer and
# UndefinedBehaviorSanitizer (GCC, CPU only) in build-asan/ and runs them: the readers, writers
# and header checks on every hostile file the io suites generate, and every command the CLI suites
# run, under the sanitizers. A report in any process (the suites, each `ndconv` they start, its
# sandboxed decoders) aborts it and is kept in build-asan/sanitizer-reports/; any report there
# fails the run, even where a test accepted the failed command. Run by scripts/test.sh after the
# test suites.
set -euo pipefail
cd "$(dirname "$0")/.."
# GCC 12 misreads libstdc++'s std::regex as possibly uninitialised under -fsanitize=address
# (14 -Wmaybe-uninitialized warnings in std_function.h from src/perf); the plain build, which
# CI holds to no warnings, has none.
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
flags="$flags -Wno-maybe-uninitialized"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNDCONV_CUDA=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  ${NDCONV_SANITIZE_CMAKE_ARGS:-} >build-asan.configure.log 2>&1 \
  || { cat build-asan.configure.log >&2; exit 1; }
io_suites=(ndconv_io_tests ndconv_formats_tests ndconv_stored_read_tests ndconv_deflate_tests)
cli_suites=(ndconv_cli_tests ndconv_cli_batch_tests ndconv_cli_console_tests
  ndconv_cli_options_tests ndconv_cli_formats_tests ndconv_cli_concurrent_tests)
# Not run here: ndconv_cli_memory_limit_tests and the three CLI tests below set an address-space
# or data-size limit (ulimit -v, RLIMIT_DATA) or bound the peak resident size; AddressSanitizer's
# shadow memory and quarantine take more than those limits, so they would measure the sanitizer,
# not ndconv. They run in the plain build.
cli_filter="-CliHostile.GzipBombIsRefusedQuicklyWithBoundedMemory"
cli_filter+=":CliHostile.MemoryEstimateIsWithinTwentyPercentAboveThePeakRss"
cli_filter+=":CliHostile.ListOfHugeSlicesIsRefusedBeforeAllocating"
targets=()
for s in "${io_suites[@]}" "${cli_suites[@]}"; do targets+=(--target "$s"); done
cmake --build build-asan -j "$(nproc)" "${targets[@]}"
reports=$PWD/build-asan/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
# Leaks are not reported; ITK's factories keep their registrations until exit by design. Crash
# signals are left to the program (handle_segv=0 and the like): ITK's JPEG, TIFF and DICOM
# decoders crash on some damaged files inside the sandboxed children that ndconv forks to contain
# them (io/decoder_sandbox.h, io/dicom_sandbox.h), and the parent tells a crash by the child's
# signal; AddressSanitizer's own handler would turn it into an exit code. A crash in ndconv itself
# still fails its test (exit 128 + the signal).
asan="detect_leaks=0:abort_on_error=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0"
export ASAN_OPTIONS=$asan:log_path=$reports/asan
export UBSAN_OPTIONS=print_stacktrace=1:log_path=$reports/ubsan
for s in "${io_suites[@]}"; do
  echo "sanitize: $s"
  build-asan/tests/io/$s --gtest_brief=1
done
for s in "${cli_suites[@]}"; do
  echo "sanitize: $s"
  build-asan/tests/cli/$s --gtest_brief=1 --gtest_filter="$cli_filter"
done
# One report is ITK's, not ndconv's: ITK 5.2's PNGImageIO::WriteSlice, when libpng fails a write
# (a file-size limit, a full disk), frees with delete[] on its error path what was allocated with
# new (the ImageIO object: the write's SmartPointer then reads freed memory). It happens in the
# child that ndconv forks for every ITK write (io/itk_write.cpp), whose failure the parent
# reports; that report is listed and set aside.
mkdir -p "$reports/itk"
for r in "$reports"/asan.*; do
  [ -e "$r" ] || continue
  if grep -q 'ERROR: AddressSanitizer: alloc-dealloc-mismatch' "$r" &&
    grep -E '^ +#1 ' "$r" | head -n 1 | grep -q 'itk::PNGImageIO::WriteSlice'; then
    echo "sanitize: set aside, ITK's PNG writer on a failed write: $(basename "$r")"
    mv "$r" "$reports/itk/"
  fi
done
if compgen -G "$reports/*.*" >/dev/null; then
  cat "$reports"/*.* >&2
  echo "sanitize: the sanitizers reported the above (build-asan/sanitizer-reports/)" >&2
  exit 1
fi
