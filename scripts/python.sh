#!/usr/bin/env bash
# The Python package: a virtual environment in .venv with the pinned dependencies
# (python/requirements.txt), the package installed from this checkout (`pip install .`, reusing
# the C++ build in build/ that scripts/setup.sh made, so the engine is compiled once), then its
# pytest suite. Used by scripts/test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${NDCONV_PYTHON:-/usr/bin/python3}
if [[ ! -x .venv/bin/python ]]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -r python/requirements.txt
# build-dir=build: scikit-build-core configures the same folder with the module turned on and
# builds only the module's target; the tests stay on in that folder's configuration.
.venv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=build-dir=build \
  --config-settings=cmake.define.NDCONV_BUILD_TESTS=ON .

# From the repository root `import ndconv` is the installed package (python/ndconv is not on the
# path).
status=0
.venv/bin/python -m pytest -q -p no:cacheprovider python/tests || status=$?
if ((status == 5)); then
  echo "python.sh: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
