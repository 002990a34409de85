#!/usr/bin/env bash
# Graph index baseline on a gen_synth.py data set, the same data and
# parameters as DiskANN's figures in ../shared/anchors/README.md:
# R 64, L_build 125, alpha 1.2, PQ bytes as given, beam width 4, no cache.
# usage: bench/scripts/graph_baseline.sh NAME N D NQ PQ_BYTES [--cosine]
#   e.g. bench/scripts/graph_baseline.sh synth1m 1000000 128 1000 32
# Writes bench/results/graph_<NAME>.{json,csv,log}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
name=$1; n=$2; d=$3; nq=$4; pq=$5; shift 5
metric=l2; extra=()
if [ "${1:-}" = "--cosine" ]; then metric=cosine; extra=(--cosine); fi
strata=${STRATA:-$root/build/release/tools/cli/strata}
data=${DATA:-$root/data}
threads=${THREADS:-2}
mkdir -p "$data" "$root/bench/results"
if [ ! -f "$data/${name}_base.fbin" ]; then
  /usr/bin/python3 "$root/../shared/bench-data/gen_synth.py" "$data" "$name" "$n" "$d" "$nq" "${extra[@]}"
fi
log="$root/bench/results/graph_${name}.log"
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "\$ strata build --type graph --base $data/${name}_base.fbin --index $data/idx_${name} --metric $metric --R 64 --L 125 --alpha 1.2 --pq-bytes $pq --threads $threads"
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    "$strata" build --type graph --base "$data/${name}_base.fbin" --index "$data/idx_${name}" \
      --metric "$metric" --R 64 --L 125 --alpha 1.2 --pq-bytes "$pq" --threads "$threads"
  fi
  echo "\$ strata bench --index $data/idx_${name} --queries $data/${name}_query.fbin --gt $data/${name}_gt.ibin --k 10 --L ${LS:-10,20,30,50,75,100,150,200} --beamwidth 4 --threads 1,2 --target-recall 0.9"
  "$strata" bench --index "$data/idx_${name}" --queries "$data/${name}_query.fbin" \
    --gt "$data/${name}_gt.ibin" --k 10 --L "${LS:-10,20,30,50,75,100,150,200}" --beamwidth 4 \
    --threads 1,2 --target-recall 0.9 --json "$root/bench/results/graph_${name}.json" \
    --csv "$root/bench/results/graph_${name}.csv"
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$log"
