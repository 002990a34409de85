#!/usr/bin/env bash
# kill -9 crash test of the Collection: runs collection_crash_harness for
# ${KILLS:-200} kills in a temporary directory (tests/crash/crash_harness.cc).
# usage: scripts/crash_test.sh [--record] [extra harness options...]
#   --record   also tee the output to bench/results/collection_crash_<date>.log
# env: KILLS (default 200), SEED (default: time), DURABILITY (async|sync,
#      default async), FRESH_EVERY (start a new collection every so many kills,
#      so that more kills land in the first index build; default 25, 0 = never),
#      BUILD_DIR (default build/release; built if missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build/release}
record=0
extra=()
for a in "$@"; do
  case "$a" in
    --record) record=1 ;;
    *) extra+=("$a") ;;
  esac
done
bin=$build/tests/crash/collection_crash_harness
if [ ! -x "$bin" ]; then
  TARGETS="collection_crash_harness" "$root/scripts/build.sh" "$build"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/strata_crash.XXXXXX")
seed=${SEED:-$(date +%s)}
cmd=("$bin" --dir "$tmp/run" --kills "${KILLS:-200}" --seed "$seed"
     --durability "${DURABILITY:-async}" --fresh-every "${FRESH_EVERY:-25}"
     ${extra[@]+"${extra[@]}"})
echo "+ ${cmd[*]}"
set +e
if [ "$record" = 1 ]; then
  mkdir -p "$root/bench/results"
  log=$root/bench/results/collection_crash_$(date +%Y-%m-%d).log
  { echo "# $(date -Is) $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?') $(nproc) cores"
    echo "# ${cmd[*]}"; } > "$log"
  "${cmd[@]}" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  echo "log: $log"
else
  "${cmd[@]}"
  rc=$?
fi
# The harness keeps the collection on failure, for inspection.
if [ "$rc" = 0 ]; then rm -rf "$tmp"; else echo "scratch kept in $tmp" >&2; fi
exit "$rc"
