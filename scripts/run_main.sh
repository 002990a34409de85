#!/usr/bin/env bash
# The README's main job on an embedded default (nothing to download):
# generate a deterministic clustered data set with exact ground truth, build
# both SSD-resident index types on it — the graph index (Vamana, default
# profile: OPQ codes, page shuffle, MemGraph) and the IVF index (Split-RaBitQ,
# RaBitQ-SSD read pipeline) — run `strata bench` on each (recall@10 / QPS /
# latency / pages per query at 1 and 2 threads, every read O_DIRECT from the
# SSD), and print the two side by side at recall 0.90 and 0.95.
# Environment: N (default 200000), DIM (128), NQ (1000), OUT (build/main-job).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# Only the CLI and the libraries it links: the tests are the test command's.
TARGETS=strata_cli "$root/scripts/build.sh" "$root/build/release"
start=$SECONDS
stage() { echo "   ($((SECONDS - start)) s since the build)"; }
strata="$root/build/release/tools/cli/strata"
N=${N:-200000}; DIM=${DIM:-128}; NQ=${NQ:-1000}
out=${OUT:-$root/build/main-job}
mkdir -p "$out"
prefix="$out/synth${N}x${DIM}"
q=(--queries "${prefix}_query.fbin" --gt "${prefix}_gt.ibin" --k 10 --threads 1,2
   --target-recall 0.9)
echo "== 1/4 data: $N x $DIM clustered vectors, $NQ queries, exact ground truth"
"$strata" gen --out "$prefix" --n "$N" --dim "$DIM" --queries "$NQ" --seed 7
stage
echo "== 2/4 build: graph index (R 64, L 125, alpha 1.2, 32-byte OPQ codes, page shuffle, MemGraph 0.5 %)"
"$strata" build --type graph --base "${prefix}_base.fbin" --index "$out/graph" --metric l2 \
  --R 64 --L 125 --alpha 1.2 --pq-bytes 32 --profile default
stage
echo "== 2/4 build: IVF index (N/1024 clusters, 9-bit RaBitQ, prefix in RAM, records on SSD)"
"$strata" build --type ivf --base "${prefix}_base.fbin" --index "$out/ivf" --metric l2
stage
echo "== 3/4 bench: graph index (default profile, beam width 4, no cache)"
"$strata" bench --index "$out/graph" "${q[@]}" --L 10,12,15,20,30,50,75 --json "$out/graph.json"
stage
echo "== 3/4 bench: IVF index (full pipeline)"
"$strata" bench --index "$out/ivf" "${q[@]}" --nprobe 1,2,3,5,10,20,40 --json "$out/ivf.json"
stage
echo "== 4/4 side by side (interpolated between sweep points)"
python3 "$root/bench/scripts/at_recall.py" "$out/graph.json" "$out/ivf.json" --targets 0.9,0.95
echo "== done in $((SECONDS - start)) s after the build"
