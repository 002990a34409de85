#!/usr/bin/env bash
# End-to-end test of filtered ground truth: `strata gt --base-labels
# --query-labels` (AND of each query's labels) and `--filter` (one Qdrant
# filter on {"labels": [...]} or on JSON-lines payloads). Every returned id
# must pass its query's filter, the label and filter paths must agree, and
# bad inputs fail with a message. Needs only bash, coreutils, awk and perl.
# usage: gt_filter_cli_test.sh PATH/TO/strata
set -euo pipefail
S=${1:?usage: gt_filter_cli_test.sh PATH/TO/strata}
T=$(mktemp -d "${TMPDIR:-/tmp}/strata_gt_filter.XXXXXX")
trap 'rm -rf "$T"' EXIT
export STRATA_NO_PROGRESS=1
N=4000
NQ=50
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh"
# ivecs rows as text: "q id id id ..." (ids -1 = missing).
dump() { perl -e 'local $/; $_ = <STDIN>; my $q = 0; while (length) { my $k = unpack("l<", $_); my @v = unpack("x4 l<$k", $_); print join(" ", $q++, @v), "\n"; substr($_, 0, 4 + 4 * $k) = ""; }' <"$1"; }

run "$S" gen --out "$T/d" --n $N --dim 16 --queries $NQ --metric l2
# Row i: labels i%5 and 10 + i%7 (DiskANN label-file form).
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) printf "%d,%d\n", i % 5, 10 + i % 7 }' >"$T/base_labels.txt"
# Query q: label q%5, and for odd q also 10 + q%7 (AND of two).
awk -v n=$NQ 'BEGIN { for (q = 0; q < n; q++) { if (q % 2) printf "%d,%d\n", q % 5, 10 + q % 7; else printf "%d\n", q % 5 } }' >"$T/query_labels.txt"

step "labels: every id carries its query's labels"
run "$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 20 --out "$T/gt_labels.ivecs" \
  --base-labels "$T/base_labels.txt" --query-labels "$T/query_labels.txt"
dump "$T/gt_labels.ivecs" | awk '{ q = $1; for (j = 2; j <= NF; j++) { id = $j;
    if (id < 0) { print "missing result for query " q; exit 1 }
    if (id % 5 != q % 5) { print "query " q ": id " id " lacks label " q % 5; exit 1 }
    if (q % 2 && id % 7 != q % 7) { print "query " q ": id " id " lacks label " 10 + q % 7; exit 1 } } }' ||
  fail "a ground-truth id fails its query's labels"

step "unfiltered ids that pass are kept in order (the filter only removes rows)"
run "$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 100 --out "$T/gt_all.ivecs"
dump "$T/gt_all.ivecs" | awk '$1 % 2 == 0 { q = $1; c = 0; printf "%d", q;
    for (j = 2; j <= NF && c < 5; j++) if ($j % 5 == q % 5) { printf " %d", $j; c++ } print "" }' >"$T/expect5"
dump "$T/gt_labels.ivecs" | awk '$1 % 2 == 0 { printf "%d %d %d %d %d %d\n", $1, $2, $3, $4, $5, $6 }' >"$T/got5"
cmp -s "$T/expect5" "$T/got5" || { diff "$T/expect5" "$T/got5" | head; fail "filtered top-5 differs from the unfiltered list filtered"; }

step "--filter on the labels agrees with --query-labels"
for q in $(seq 1 $NQ); do echo 3; done >"$T/q3.txt"
run "$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 20 --out "$T/gt_q3.ivecs" \
  --base-labels "$T/base_labels.txt" --query-labels "$T/q3.txt"
run "$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 20 --out "$T/gt_f3.ivecs" \
  --base-labels "$T/base_labels.txt" --filter '{"must": [{"key": "labels", "match": {"value": 3}}]}'
cmp -s "$T/gt_q3.ivecs" "$T/gt_f3.ivecs" || fail "--filter and --query-labels disagree"

step "--filter on JSON-lines payloads: a range, and too few passing rows"
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) printf "{\"row\": %d}\n", i }' >"$T/payloads.jsonl"
run "$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 20 --out "$T/gt_r.ivecs" \
  --base-payloads "$T/payloads.jsonl" --filter '{"must": [{"key": "row", "range": {"gte": 100, "lt": 110}}]}'
grep -q "filtered: $NQ queries have fewer than 20" "$T/out" || fail "short rows not reported"
dump "$T/gt_r.ivecs" | awk '{ n = 0; for (j = 2; j <= NF; j++) { if ($j >= 0) { n++; if ($j < 100 || $j >= 110) { print "id " $j; exit 1 } } } if (n != 10) { print "query " $1 " has " n " hits"; exit 1 } }' ||
  fail "range filter: wrong ids or not exactly the 10 passing rows"

step "filtered search by labels inside the graph and IVF searches"
run "$S" build --type graph --base "$T/d_base.fbin" --index "$T/graph" --metric l2 --R 32 --L 64
run "$S" build --type ivf --base "$T/d_base.fbin" --index "$T/ivf" --metric l2
run "$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 10 --out "$T/gt10.ibin" \
  --base-labels "$T/base_labels.txt" --query-labels "$T/query_labels.txt"
for idx in graph ivf; do
  knob="--L 200"
  [ $idx = ivf ] && knob="--nprobe 64"
  run "$S" search --index "$T/$idx" --queries "$T/d_query.fbin" --k 10 $knob --out "$T/res_$idx.ivecs" \
    --base-labels "$T/base_labels.txt" --query-labels "$T/query_labels.txt"
  dump "$T/res_$idx.ivecs" | awk '{ q = $1; for (j = 2; j <= NF; j++) { id = $j; if (id < 0) continue;
      if (id % 5 != q % 5 || (q % 2 && id % 7 != q % 7)) { print "query " q ": id " id; exit 1 } } }' ||
    fail "$idx: a result fails its query's labels"
  run "$S" search --index "$T/$idx" --queries "$T/d_query.fbin" --k 10 $knob --out "$T/res_$idx.ibin" \
    --base-labels "$T/base_labels.txt" --query-labels "$T/query_labels.txt"
  run "$S" recall --results "$T/res_$idx.ibin" --gt "$T/gt10.ibin" --k 10 --json
  # The bar is the walk's today (no per-label entry points or exact-scan
  # fallback yet): 0.894 for the graph at specificity 1/5 and 1/35 here.
  min=0.85
  [ $idx = ivf ] && min=0.95
  MIN=$min perl -ne '$r = $1 if /"recall_at_k":\s*([0-9.eE+-]+)/;
      END { print "recall $r\n"; exit(!defined $r ? 2 : $r >= $ENV{MIN} ? 0 : 1) }' "$T/out" ||
    fail "$idx: filtered recall@10 below $min"
done

step "a graph built with --label_file: the walk the labels steer (exact scan off)"
# Labels unrelated to position here; the build keeps each label's rows
# connected, so the walk from the label's start row, over passing rows only,
# must still find the filtered neighbours.
run "$S" build --type graph --base "$T/d_base.fbin" --index "$T/lgraph" --metric l2 --R 32 --L 64 \
  --label_file "$T/base_labels.txt"
[ -f "$T/lgraph/label_starts.bin" ] || fail "no label_starts.bin in a label build"
run "$S" search --index "$T/lgraph" --queries "$T/d_query.fbin" --k 10 --L 100 --out "$T/res_l.ibin" \
  --base-labels "$T/base_labels.txt" --query-labels "$T/query_labels.txt" --exact-scan-limit 0
run "$S" recall --results "$T/res_l.ibin" --gt "$T/gt10.ibin" --k 10 --json
perl -ne '$r = $1 if /"recall_at_k":\s*([0-9.eE+-]+)/;
    END { print "recall $r\n"; exit(!defined $r ? 2 : $r >= 0.9 ? 0 : 1) }' "$T/out" ||
  fail "label graph: steered recall@10 below 0.9"
head -n 10 "$T/base_labels.txt" >"$T/short.txt"
expect_fail "rows" "$S" build --type graph --base "$T/d_base.fbin" --index "$T/x" \
  --label_file "$T/short.txt"

step "bad inputs fail with a message"
G=("$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 10 --out "$T/x.ivecs")
expect_fail "needs --base-labels" "${G[@]}" --query-labels "$T/query_labels.txt"
head -n 10 "$T/base_labels.txt" >"$T/short.txt"
expect_fail "rows" "${G[@]}" --base-labels "$T/short.txt" --query-labels "$T/query_labels.txt"
printf '1\nred\n' >"$T/badlab.txt"
expect_fail "line 2" "${G[@]}" --base-labels "$T/badlab.txt"
expect_fail "--filter" "${G[@]}" --base-labels "$T/base_labels.txt" --filter '{"must": [{"key": "labels", "match": {"valu": 3}}]}'
expect_fail "lines" "${G[@]}" --base-payloads "$T/short.txt" --filter '{"must": []}'
expect_fail "go together" "$S" search --index "$T/graph" --queries "$T/d_query.fbin" --out "$T/x.ibin" \
  --query-labels "$T/query_labels.txt"
expect_fail "rows" "$S" search --index "$T/graph" --queries "$T/d_query.fbin" --out "$T/x.ibin" \
  --base-labels "$T/short.txt" --query-labels "$T/query_labels.txt"
echo "PASS"
