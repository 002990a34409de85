#!/usr/bin/env bash
# NAVIS's ablation on the in-place graph (bench/macro/in_place_bench.cc),
# each configuration from the same copy of a decoupled layout: 1 search
# thread beside 1 insert thread, then inserts alone on 2 threads.
#   layout       the decoupled layout alone: static entrance graph, whole
#                re-rank, no cache
#   +selective   + speculative re-ranking (groups of 8 vectors)
#   +entrance    + the live entrance graph
#   +cache       + a hot edge-page cache of CACHE_MIB (LFU)
#   insert2      inserts only, 2 threads (all of the above)
# usage: bench/scripts/in_place_ablation.sh INDEX DECOUPLED BASE QUERIES START END OUT_STEM
# Writes OUT_STEM.<config>.json and OUT_STEM.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
index=$1; layout=$2; base=$3; queries=$4; start=$5; end=$6; out=$7
bench=${BENCH:-$root/build/release/bench/macro/in_place_bench}
cache=${CACHE_MIB:-48}
work=$(mktemp -d "${TMPDIR:-/tmp}/in_place_ablation.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1  # idle OpenBLAS workers spin on sched_yield
run() {
  local name=$1; shift
  rm -rf "$work/layout" && cp -r "$layout" "$work/layout"
  echo "## $name"
  "$bench" --index "$index" --decoupled "$work/layout" --base "$base" --queries "$queries" \
    --start "$start" --end "$end" --L 50 --search-seconds 10 --json "$out.$name.json" "$@"
}
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  run layout --search-threads 1 --insert-threads 1 --no-entrance
  run selective --search-threads 1 --insert-threads 1 --no-entrance --rerank-group 8
  run entrance --search-threads 1 --insert-threads 1 --rerank-group 8
  run cache --search-threads 1 --insert-threads 1 --rerank-group 8 --cache-mib "$cache"
  run insert2 --search-threads 0 --insert-threads 2 --rerank-group 8 --cache-mib "$cache"
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
