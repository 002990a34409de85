#!/usr/bin/env bash
# Static search on the decoupled layout (NAVIS's edge pages + vector file)
# against the node-file layouts it is written from, same graph, same codes:
# `strata decouple` on a packed and a page-shuffled index, then one
# `strata bench` sweep of L per layout (and per re-rank group on the
# decoupled ones), all in one run.
# usage: bench/scripts/decoupled_static.sh PACKED_INDEX SHUFFLED_INDEX QUERIES GT
# env: STRATA (binary), OUT (results stem), LS (L sweep), THREADS, RERANK_GROUPS.
# Writes $OUT.log and $OUT.<config>.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
packed=$1; shuffled=$2; queries=$3; gt=$4
strata=${STRATA:-$root/build/release/tools/cli/strata}
out=${OUT:-$root/bench/results/decoupled_static_synth1m}
ls=${LS:-10,15,20,30,50,75,100}
threads=${THREADS:-2}
groups=${RERANK_GROUPS:-8 4 0}
work=$(mktemp -d "${TMPDIR:-/tmp}/decoupled.XXXXXX")
trap 'rm -rf "$work"' EXIT
common=(--queries "$queries" --gt "$gt" --k 10 --L "$ls" -W 4 --threads "$threads")
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for name in packed shuffled; do
    idx=$packed; [ "$name" = shuffled ] && idx=$shuffled
    "$strata" decouple --index "$idx" --out "$work/$name"
    echo "## $name node file"
    taskset -c 0,1 "$strata" bench --index "$idx" "${common[@]}" --json "$out.$name.json"
    for g in $groups; do
      echo "## $name, decoupled, re-rank group $g"
      taskset -c 0,1 "$strata" bench --index "$idx" --decoupled "$work/$name" --rerank-group "$g" \
        "${common[@]}" --json "$out.$name-decoupled-g$g.json"
    done
  done
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
