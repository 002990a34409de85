#!/usr/bin/env bash
# The hot edge-page cache's policies while the graph takes inserts (NAVIS's
# Fig. 17b, measured there on a static index): the in-place graph
# (bench/macro/in_place_bench.cc), 1 search thread beside 1 insert thread,
# each policy and cache size from a fresh copy of the same decoupled layout.
# Inserts move edge lists to new pages: a page written with lists that left
# cached pages is offered as hot as they were (EdgePageCache::Offer's heat),
# and the pages they left cool off. The question is which policy keeps the
# hit rate under that churn.
# usage: bench/scripts/in_place_cache_policies.sh INDEX DECOUPLED BASE QUERIES START END OUT_STEM
# Environment: SIZES_MIB (default "9 18 36"), POLICIES (default "navis lru clock lfu").
# Writes OUT_STEM.<policy>_<mib>.json and OUT_STEM.log.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
index=$1; layout=$2; base=$3; queries=$4; start=$5; end=$6; out=$7
bench=${BENCH:-$root/build/release/bench/macro/in_place_bench}
sizes=${SIZES_MIB:-9 18 36}
policies=${POLICIES:-navis lru clock lfu}
work=$(mktemp -d "${TMPDIR:-/tmp}/in_place_cache.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1  # idle OpenBLAS workers spin on sched_yield
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for mib in $sizes; do
    for policy in $policies; do
      rm -rf "$work/layout" && cp -r "$layout" "$work/layout"
      echo "## $policy, $mib MiB"
      "$bench" --index "$index" --decoupled "$work/layout" --base "$base" --queries "$queries" \
        --start "$start" --end "$end" --L 50 --search-seconds 10 --search-threads 1 \
        --insert-threads 1 --rerank-group 8 --cache-mib "$mib" --cache-policy "$policy" \
        --json "$out.${policy}_${mib}.json"
    done
  done
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
