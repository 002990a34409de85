#!/usr/bin/env bash
# The decoupled layout's hot edge-page cache: hit rate, pages per query and
# QPS per policy (navis, lru, clock, lfu) and size, after one unreported
# warm-up of WARMUP (5000) queries spread over WARMUP_VECTORS (e.g. the base
# file: other vectors than the measured queries, so that the cache cannot
# simply replay them); NAVIS's Fig. 17b shape. Beside it the node file with a
# node cache of the same size (frequency policy), same graph.
# usage: bench/scripts/decoupled_cache.sh INDEX DECOUPLED_DIR QUERIES GT WARMUP_VECTORS
# env: STRATA, OUT (results stem), MIBS (sizes), L, THREADS, WARMUP.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
index=$1; layout=$2; queries=$3; gt=$4; warm=$5
strata=${STRATA:-$root/build/release/tools/cli/strata}
out=${OUT:-$root/bench/results/decoupled_cache_synth1m}
mibs=${MIBS:-18 36 73}
L=${L:-20,50}
common=(--queries "$queries" --gt "$gt" --k 10 --L "$L" -W 4 --threads "${THREADS:-2}"
        --warmup "${WARMUP:-5000}" --warmup-queries "$warm")
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  for mib in $mibs; do
    for policy in navis lru clock lfu; do
      echo "## decoupled, rerank group 0, edge cache $mib MiB, $policy"
      taskset -c 0,1 "$strata" bench --index "$index" --decoupled "$layout" --rerank-group 0 \
        --cache-mib "$mib" --edge-cache-policy "$policy" "${common[@]}" \
        --json "$out.d$mib-$policy.json"
    done
    echo "## node file, node cache $mib MiB (frequency)"
    taskset -c 0,1 "$strata" bench --index "$index" --cache-mib "$mib" --cache-policy frequency \
      "${common[@]}" --json "$out.n$mib.json"
  done
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
/usr/bin/python3 - "$out" <<'PY'
import glob, json, sys
stem = sys.argv[1]
print("| config | L | recall@10 | QPS | p50 us | p99 us | pages read/q | cache hits/q | hits / all page accesses |")
print("|---|---|---|---|---|---|---|---|---|")
for f in sorted(glob.glob(stem + ".*.json")):
    d = json.load(open(f))
    for r in d["rows"]:
        hits = r.get("mean_cache_hits", 0)
        rate = hits / (hits + r["mean_pages_read"])
        print(f"| {f.split('.')[-2]} | {r['L']} | {r['recall_at_k']:.4f} | {r['qps']:.0f} | {r['p50_latency_us']:.0f} | "
              f"{r['p99_latency_us']:.0f} | {r['mean_pages_read']:.1f} | {hits:.1f} | {rate:.3f} |")
PY
