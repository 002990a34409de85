#!/usr/bin/env bash
# End-to-end test of `strata decouple`: a graph index's decoupled layout and
# the packed in-place baseline's (`--vectors-in-pages`: every edge slot
# carries its vector, so fewer lists share a page), both searched with
# `strata search --decoupled` to recall@10 >= 0.95 against exact ground
# truth; the packed layout's searches read no vectors to re-rank. Needs only
# bash, coreutils, sed and awk.
# usage: decouple_cli_test.sh PATH/TO/strata
set -euo pipefail
S=${1:?usage: decouple_cli_test.sh PATH/TO/strata}
T=$(mktemp -d "${TMPDIR:-/tmp}/strata_decouple.XXXXXX")
trap 'rm -rf "$T"' EXIT
export STRATA_NO_PROGRESS=1
source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh"

run "$S" gen --out "$T/d" --n 3000 --dim 32 --queries 50 --metric l2
run "$S" build --base "$T/d_base.fbin" --index "$T/idx" --R 24 --L 48 --threads 2

pages() { sed -n 's/.* on \([0-9]*\) edge pages.*/\1/p' "$T/out"; }
step "decoupled layout"
run "$S" decouple --index "$T/idx" --out "$T/dec" --threads 2
decoupled_pages=$(pages)
step "packed baseline: vectors in the edge pages"
run "$S" decouple --index "$T/idx" --out "$T/packed" --threads 2 --vectors-in-pages
packed_pages=$(pages)
# d 32: 32 ids (1.3 R) + 128 vector bytes a slot, 15 lists a page against 30.
[ "$packed_pages" -gt $((decoupled_pages * 3 / 2)) ] ||
  fail "the packed baseline holds $packed_pages pages, the decoupled layout $decoupled_pages"

for layout in dec packed; do
  step "search the $layout layout"
  run "$S" search --index "$T/idx" --decoupled "$T/$layout" --queries "$T/d_query.fbin" \
    --out "$T/res_$layout.ibin" --k 10 --L 64 --stats "$T/stats_$layout.json"
  run "$S" recall --results "$T/res_$layout.ibin" --gt "$T/d_gt.ibin" --k 10 --json
  recall=$(sed -n 's/.*"recall_at_k": *\([0-9.]*\).*/\1/p' "$T/out")
  awk -v r="$recall" 'BEGIN { exit !(r >= 0.95) }' || fail "$layout: recall@10 $recall < 0.95"
done
# One exact distance an expanded vertex, taken from its page: none more
# from vector reads.
field() { sed -n "s/.*\"$1\": *\([0-9.]*\).*/\1/p" "$T/stats_packed.json"; }
[ "$(field mean_full_distances)" = "$(field mean_expanded)" ] ||
  fail "the packed baseline re-ranked from vector reads: $(cat "$T/stats_packed.json")"
echo "decouple CLI: all checks passed"
