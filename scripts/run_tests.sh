#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (Release) and
# runs the whole test suite (unit + integration, fast and slow labels), then
# the Python package's pytest suite (bindings/python/tests) and the benchmark
# harness adapters' tests (tests/harness).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${BUILD_DIR:-$root/build/release}
"$root/scripts/build.sh" "$dir"
cd "$dir"
ctest --output-on-failure -j "$(nproc)" --timeout 600
# Debian's interpreter: the one python3-numpy and python3-pytest install into,
# and the one the package is built for (STRATA_PYTHON_EXECUTABLE). A build
# without the package is a failure here, not a skip. Under `set -e` any
# non-zero pytest status fails the script, 5 ("no tests collected") included.
if ! ls "$dir"/python/strata/_strata*.so >/dev/null 2>&1; then
  echo "run_tests: the Python package was not built in $dir/python (see cmake's output)" >&2
  exit 1
fi
PYTHONPATH="$dir/python" STRATA_CLI="$dir/tools/cli/strata" STRATA_CMAKE_BUILD_DIR="$dir" \
  /usr/bin/python3 -m pytest -q -p no:cacheprovider "$root/bindings/python/tests"
# The benchmark harnesses' adapters run through the real harnesses (snapshots
# in ../shared/peers beside the repository; a test skips, saying so, when its
# snapshot is absent).
PYTHONPATH="$dir/python" STRATA_REPO="$root" \
  /usr/bin/python3 -m pytest -q -rs -p no:cacheprovider "$root/tests/harness"
