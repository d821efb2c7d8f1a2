#!/usr/bin/env bash
# Set-up, build and the whole test suite (CPU tests run; GPU tests are skipped with a reason on a
# machine without a usable GPU), then the Python package installed from this checkout and its
# pytest suite (scripts/python.sh), then the io and CLI suites under AddressSanitizer and
# UndefinedBehaviorSanitizer (scripts/sanitize.sh) and the parsers' fuzz targets for 40 s each
# (scripts/fuzz.sh).
# This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 600
bash scripts/python.sh
bash scripts/sanitize.sh
bash scripts/fuzz.sh
