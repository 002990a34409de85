#!/usr/bin/env bash
# Builds a libFuzzer target with clang (build/fuzz, STRATA_FUZZ=ON) and runs
# it for a bounded time over the seed corpus (tests/fuzz/corpus/server); new
# inputs go to a scratch directory, crashes to build/fuzz/artifacts.
# usage: tests/fuzz/run_fuzz.sh [TARGET] [libFuzzer args...]
#   TARGET: request_fuzz (default: pure parsing, builds in about a minute) or
#           server_fuzz (Dispatch over a real collection: builds every module).
#   default args: -max_total_time=${FUZZ_SECONDS:-60}
# env: BUILD_DIR (default build/fuzz), FUZZ_SECONDS.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${1:-request_fuzz}
shift || true
dir=${BUILD_DIR:-$root/build/fuzz}
command -v clang++ >/dev/null || { echo "run_fuzz: clang++ not found (scripts/install_deps.sh)" >&2; exit 1; }
CC=clang CXX=clang++ cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_FUZZ=ON \
  -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF -DSTRATA_BUILD_PYTHON=OFF \
  -DSTRATA_BUILD_TOOLS=OFF >/dev/null
ninja -C "$dir" -j "$(nproc)" "$target"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$dir/artifacts"
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-max_total_time="${FUZZ_SECONDS:-60}")
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$dir/tests/fuzz/$target" -dict="$root/tests/fuzz/json.dict" -max_len=65536 -timeout=10 \
  -rss_limit_mb=4096 -artifact_prefix="$dir/artifacts/" -print_final_stats=1 "${args[@]}" \
  "$scratch" "$root/tests/fuzz/corpus/server"
