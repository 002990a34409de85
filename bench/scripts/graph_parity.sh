#!/usr/bin/env bash
# Issue #5's target at its own parameters (R 64, L_build 125, alpha 1.2,
# 32-byte PQ, W 4, no cache) on synth1m, in one run:
#   - the DiskANN-equivalent search (`--profile baseline`) on the id-ordered
#     (packed) index, as DiskANN lays it out;
#   - the same graph and the same plain PQ codes page-shuffled, searched with
#     page search (OctopusANN's C1: no MemGraph, no cache, no OPQ).
# Indexes: bench/scripts/graph_ablation.sh builds data/idx1m_pq_packed and
# data/idx1m_pq_shuffled. Writes bench/results/graph_parity_synth1m*.{json,log}.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
strata=${STRATA:-$root/build/tools/cli/strata}
data=${DATA:-$root/data}
out="$root/bench/results/graph_parity_synth1m"
lock=/tmp/strata-bench.lock
run() {  # tag queries-prefix threads index L-list extra-flags...
  local tag=$1 q=$2 t=$3 idx=$4 L=$5; shift 5
  echo "\$ strata bench --index $idx --queries ${q}_query.fbin --gt ${q}_gt.ibin --k 10 -W 4 --L $L --threads $t $* --target-recall 0.9"
  flock "$lock" "$strata" bench --index "$data/$idx" --queries "$data/${q}_query.fbin" \
    --gt "$data/${q}_gt.ibin" --k 10 -W 4 --L "$L" --threads "$t" "$@" --target-recall 0.9 \
    --json "${out}_${tag}.json"
}
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  run baseline synth1m 1,2 idx1m_pq_packed 40,45,50,55,60,75 --profile baseline
  run c1 synth1m 1,2 idx1m_pq_shuffled 20,25,30,35,40,50 --profile baseline --page-search true
  run baseline_10kq synth1m10kq 2 idx1m_pq_packed 45,50,55,60 --profile baseline
  run c1_10kq synth1m10kq 2 idx1m_pq_shuffled 25,30,35,40 --profile baseline --page-search true
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
