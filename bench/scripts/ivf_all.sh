#!/usr/bin/env bash
# Every IVF measurement of bench/results/ivf_*, in priority order (see
# ivf_bench.sh; each step takes the benchmark lock on its own).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
b="$root/bench/scripts/ivf_bench.sh"
# synth1m, default build (C = N/1024, D_m = D, B = 9, IRQ): k = 10 sweep.
NPROBE=1,2,3,4,6,8,12,16,24,32 "$b" synth1m l2 synth1m
# The five pipelines (RaBitQ-SSD Table 1 shape) on the same index, and the
# scheduled designs as RaBitQ-SSD has them (all Q slots filled before dist_k).
SKIP_BUILD=1 IDX_TAG=synth1m NPROBE=1,2,3,4 PIPELINES=naive,coalesced,overlapped,scheduled,full \
  "$b" synth1m l2 synth1m_pipelines
SKIP_BUILD=1 IDX_TAG=synth1m NPROBE=1,2,3,4 PIPELINES=scheduled,full BENCH_FLAGS="--fill-first false" \
  "$b" synth1m l2 synth1m_pipelines_seed
# RaBitQ-SSD's record order (by distance to the centroid only).
NPROBE=1,2,3,4 "$b" synth1m l2 synth1m_centroid --page-order centroid
# k = 100.
K=100 NPROBE=2,4,6,8,12,16,24,32 SKIP_BUILD=1 IDX_TAG=synth1m "$b" synth1m l2 synth1m_k100
# D_m = D/2 and raw re-ranking.
NPROBE=1,2,3,4,6,8,12,16,24,32 "$b" synth1m l2 synth1m_dm64 --prefix-bits 64
NPROBE=1,2,3,4,6,8,12,16 "$b" synth1m l2 synth1m_raw --rerank raw
# 768-d cosine: D_m in {D/4, D/2, 3D/4, D}.
for dm in 192 384 576 768; do
  NPROBE=1,2,3,4,6,8,12,16,24 "$b" synth200k768c cosine "synth200k768c_dm$dm" --prefix-bits "$dm"
done
# The graph index's default composition in the same period (its index is
# built by bench/scripts/graph_ablation.sh as data/idx1m_default_mg05).
if [ -d "$root/data/idx1m_default_mg05" ]; then
  strata=${STRATA:-$root/build/tools/cli/strata}
  {
    echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
    flock /tmp/strata-bench.lock "$strata" bench --index "$root/data/idx1m_default_mg05" \
      --queries "$root/data/synth1m_query.fbin" --gt "$root/data/synth1m_gt.ibin" --k 10 \
      --L 10,12,15,20,30 --threads 1,2 --json "$root/bench/results/graph_default_synth1m_ivfrun.json"
  } 2>&1 | tee "$root/bench/results/graph_default_synth1m_ivfrun.log"
fi
