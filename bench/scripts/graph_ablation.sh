#!/usr/bin/env bash
# OctopusANN's ablation on a gen_synth.py data set: builds the packed index
# (PQ, MemGraph sample 1 %), then from the same graph the page-shuffled index
# and the default profile's index (OPQ + shuffle + MemGraph), runs
# `strata bench --ablation` (single factors and C1..C5 at threads 1 and 2)
# and plots recall against QPS and pages/query.
# usage: bench/scripts/graph_ablation.sh NAME PQ_BYTES [METRIC]
#   e.g. bench/scripts/graph_ablation.sh synth1m 32
# env: STRATA (binary), DATA (data dir), LS (L sweep), SKIP_BUILD=1, THREADS.
# Writes bench/results/graph_ablation_<NAME>.{log,json,png}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
name=$1; pq=$2; metric=${3:-l2}
strata=${STRATA:-$root/build/release/tools/cli/strata}
data=${DATA:-$root/data}
threads=${THREADS:-1,2}
ls=${LS:-10,15,20,25,30,40,50,75,100,150}
out=$root/bench/results/graph_ablation_${name}
common=(--type graph --base "$data/${name}_base.fbin" --metric "$metric" --R 64 --L 125
        --alpha 1.2 --pq-bytes "$pq" --threads 2)
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    set -x
    "$strata" build "${common[@]}" --index "$data/idx_${name}_packed" --profile baseline \
      --memgraph-ratio 0.01
    "$strata" build "${common[@]}" --index "$data/idx_${name}_shuffled" --profile baseline \
      --memgraph-ratio 0.01 --shuffle true --reuse-graph "$data/idx_${name}_packed"
    "$strata" build "${common[@]}" --index "$data/idx_${name}_default" --profile default \
      --reuse-graph "$data/idx_${name}_packed"
    set +x
  fi
  echo "\$ strata bench --ablation --index $data/idx_${name}_packed --shuffled-index $data/idx_${name}_shuffled --default-index $data/idx_${name}_default --queries $data/${name}_query.fbin --gt $data/${name}_gt.ibin --k 10 --L $ls -W 4 --threads $threads --json $out.json"
  "$strata" bench --ablation --index "$data/idx_${name}_packed" \
    --shuffled-index "$data/idx_${name}_shuffled" --default-index "$data/idx_${name}_default" \
    --queries "$data/${name}_query.fbin" --gt "$data/${name}_gt.ibin" --k 10 --L "$ls" -W 4 \
    --threads "$threads" --json "$out.json"
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
/usr/bin/python3 "$root/bench/scripts/plot_recall_qps.py" "$out.png" "$out.json" --title "$name"
