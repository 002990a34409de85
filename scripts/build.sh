#!/usr/bin/env bash
# Configures and builds Strata into a build directory (default build/release).
# usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
# env: TARGETS (ninja targets, space-separated; default all, tests included).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$root/build/release}
shift || true
"$root/scripts/install_deps.sh"
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
read -r -a targets <<< "${TARGETS:-}"
ninja -C "$dir" -j "$(nproc)" ${targets[@]+"${targets[@]}"}
