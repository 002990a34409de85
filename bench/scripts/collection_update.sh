#!/usr/bin/env bash
# A collection that changes while it serves: buffered mode (pending list +
# merges) against in-place mode (NAVIS), same data, one run each
# (bench/macro/collection_update_bench.cc).
# usage: bench/scripts/collection_update.sh BASE QUERIES START END DELETES OUT_STEM [extra flags]
# e.g.   bench/scripts/collection_update.sh synth1m_base.fbin synth1m_query.fbin \
#          500000 1000000 0 bench/results/collection_update_synth1m_500k_to_1m
# Writes OUT_STEM.json and OUT_STEM.log. OpenBLAS's idle workers spin on
# sched_yield for a long time after a call (the ground truth's): one thread
# keeps them from taking a core from the writes and searches measured.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
base=$1; queries=$2; start=$3; end=$4; deletes=$5; out=$6; shift 6
bench=${BENCH:-$root/build/release/bench/macro/collection_update_bench}
work=$(mktemp -d "${TMPDIR:-/tmp}/collection_update.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$bench" --base "$base" --queries "$queries" --dir "$work" --json "$out.json" \
    --start "$start" --end "$end" --deletes "$deletes" "$@"
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
