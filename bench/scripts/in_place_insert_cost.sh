#!/usr/bin/env bash
# What one in-place insert costs (bench/macro/in_place_bench.cc): inserts
# into the bare in-place graph (no collection) from a fresh copy of a
# decoupled layout, with the CPU time of the whole process (GNU time), so
# that configurations (insert threads, the seek's beam width and list size)
# can be compared by throughput and by CPU per insert. Run a second time
# with END = START + 1 for the fixed cost (loading, ground truth) to take off.
# usage: bench/scripts/in_place_insert_cost.sh INDEX DECOUPLED BASE QUERIES START END OUT_JSON [flags]
# e.g.   ... idx500k idx500k_dec synth1m_base.fbin synth1m_query.fbin 500000 510000 \
#            out.json --search-threads 0 --insert-threads 2 --insert-W 8
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
index=$1; layout=$2; base=$3; queries=$4; start=$5; end=$6; out=$7; shift 7
bench=${BENCH:-$root/build/release/bench/macro/in_place_bench}
work=$(mktemp -d "${TMPDIR:-/tmp}/in_place_insert_cost.XXXXXX")
trap 'rm -rf "$work"' EXIT
export OPENBLAS_NUM_THREADS=1  # idle OpenBLAS workers spin on sched_yield
cp -r "$layout" "$work/layout"
/usr/bin/time -f "CPU user %U s, sys %S s, wall %e s" \
  "$bench" --index "$index" --decoupled "$work/layout" --base "$base" --queries "$queries" \
  --start "$start" --end "$end" --L 50 --search-seconds 3 --rerank-group 8 --cache-mib 48 \
  --json "$out" "$@"
