#!/usr/bin/env bash
# The README's main job on an embedded default (nothing to download):
# generate a deterministic clustered data set with exact ground truth, build
# the graph index (Vamana + PQ, records on SSD), and run `strata bench`: the
# recall@10 / QPS / latency / pages-per-query table over a sweep of L, with 1
# and 2 threads, every read O_DIRECT from the SSD.
# Environment: N (default 200000), DIM (128), NQ (1000), OUT (build/main-job).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$root/build/release"
strata="$root/build/release/tools/cli/strata"
N=${N:-200000}; DIM=${DIM:-128}; NQ=${NQ:-1000}
out=${OUT:-$root/build/main-job}
mkdir -p "$out"
prefix="$out/synth${N}x${DIM}"
echo "== 1/3 data: $N x $DIM clustered vectors, $NQ queries, exact ground truth"
"$strata" gen --out "$prefix" --n "$N" --dim "$DIM" --queries "$NQ" --seed 7
echo "== 2/3 build: graph index (R 64, L 125, alpha 1.2, 32-byte PQ)"
"$strata" build --type graph --base "${prefix}_base.fbin" --index "$out/index" --metric l2 \
  --R 64 --L 125 --alpha 1.2 --pq-bytes 32
echo "== 3/3 bench: recall@10 vs QPS vs pages/query (beam width 4, no cache)"
"$strata" bench --index "$out/index" --queries "${prefix}_query.fbin" --gt "${prefix}_gt.ibin" \
  --k 10 --L 10,20,30,50,75,100,150 --beamwidth 4 --threads 1,2 --target-recall 0.9 \
  --json "$out/bench.json"
