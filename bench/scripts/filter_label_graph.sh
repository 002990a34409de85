#!/usr/bin/env bash
# A/B of the label-aware graph build (strata build --label_file: Filtered-
# DiskANN's FilteredVamana, walks steered by the labels from each label's
# start row) against the ordinary graph of the same data, by `strata bench`
# over the label buckets of bench/scripts/filter_labels_bench.py (which wrote
# DATA/base_labels.txt, query_labels_B.txt and the exact gt_B.ibin).
# The exact-scan fallback is off (--exact-scan-limit 0) so both walk.
# usage: bench/scripts/filter_label_graph.sh STRATA BASE QUERIES DATA PLAIN_INDEX OUT_PREFIX
set -euo pipefail
S=$1 BASE=$2 Q=$3 DATA=$4 PLAIN=$5 OUT=$6
LG=${PLAIN%/}_labels
export STRATA_NO_PROGRESS=1
if [ ! -f "$LG/manifest.json" ]; then
  /usr/bin/time -v "$S" build --type graph --base "$BASE" --index "$LG" \
    --label_file "$DATA/base_labels.txt" 2>"$OUT.build_time.txt"
fi
# Unfiltered search on both: what the label build costs a search without labels.
[ -f "$DATA/gt_unfiltered.ibin" ] || "$S" gt --base "$BASE" --queries "$Q" --k 10 --out "$DATA/gt_unfiltered.ibin"
for IDX in "$PLAIN" "$LG"; do
  "$S" bench --index "$IDX" --queries "$Q" --gt "$DATA/gt_unfiltered.ibin" --L 10,20,50,100,200 \
    --threads 2 --json "${OUT}_$(basename "$IDX")_unfiltered.json"
done
for B in 0.5 0.1 0.01; do
  for IDX in "$PLAIN" "$LG"; do
    name=$(basename "$IDX")
    "$S" bench --index "$IDX" --queries "$Q" --gt "$DATA/gt_$B.ibin" --L 10,20,50,100,200 \
      --threads 2 --base-labels "$DATA/base_labels.txt" --query-labels "$DATA/query_labels_$B.txt" \
      --exact-scan-limit 0 --json "${OUT}_${name}_$B.json"
  done
done
