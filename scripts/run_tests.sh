#!/usr/bin/env bash
# The README's test command: installs what is missing, builds (Release) and
# runs the whole test suite (unit + integration, fast and slow labels).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${BUILD_DIR:-$root/build/release}
"$root/scripts/build.sh" "$dir"
cd "$dir"
ctest --output-on-failure -j "$(nproc)" --timeout 600
