#!/usr/bin/env bash
# End-to-end test of `strata collection` and `strata info` on a collection:
# create, upsert past the flat threshold (ids, payloads), search with recall,
# get, delete, stats, merge, an IVF collection, and bad inputs failing
# non-zero with a message. Needs only bash, coreutils, awk and perl.
# usage: collection_cli_test.sh PATH/TO/strata
set -euo pipefail
S=${1:?usage: collection_cli_test.sh PATH/TO/strata}
T=$(mktemp -d "${TMPDIR:-/tmp}/strata_collection_cli.XXXXXX")
trap 'rm -rf "$T"' EXIT
export STRATA_NO_PROGRESS=1

N=3000
D=32
NQ=100
C=$T/coll

source "$(dirname "${BASH_SOURCE[0]}")/cli_test_lib.sh"
# recall_of FILE: the number after "recall@K" in a search report.
recall_of() { sed -n 's/.*recall@[0-9]* \([0-9.]*\).*/\1/p' "$1" | tail -1; }
assert_ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }' || fail "$3: $1 < $2"; }
# json_num FILE KEY: the first numeric value of "KEY": in a JSON file.
json_num() { sed -n "s/.*\"$2\": \\([-0-9.e+]*\\).*/\\1/p" "$1" | head -1; }
# row_floats FILE ROW DIM: row ROW of an .fbin file, one float per line.
row_floats() {
  perl -e 'open(F, "<:raw", $ARGV[0]) or die; my ($r, $d) = @ARGV[1, 2];
           seek(F, 8 + $r * $d * 4, 0); read(F, my $b, $d * 4) == $d * 4 or die;
           print join("\n", map { sprintf("%.9g", $_) } unpack("f<*", $b)), "\n";' "$@"
}
# fbin_slice IN OUT BEGIN COUNT DIM: rows [BEGIN, BEGIN+COUNT) of IN as a new .fbin.
fbin_slice() {
  perl -e 'open(F, "<:raw", $ARGV[0]) or die; open(O, ">:raw", $ARGV[1]) or die;
           my ($b, $n, $d) = @ARGV[2 .. 4]; seek(F, 8 + $b * $d * 4, 0);
           read(F, my $x, $n * $d * 4) == $n * $d * 4 or die;
           print O pack("L<L<", $n, $d), $x;' "$@"
}
# same_floats A B: two files of one float per line agree to 1e-5 (relative).
same_floats() {
  paste "$1" "$2" | awk '{ d = $1 - $2; if (d < 0) d = -d; m = ($1 < 0 ? -$1 : $1);
                           if (d > 1e-5 * (m > 1 ? m : 1)) { print "row differs at " NR ": " $0; bad = 1 } }
                         END { if (NR == 0) { print "no values"; bad = 1 } exit bad }'
}

step "data: $N x $D base, $NQ queries, exact ground truth"
run "$S" gen --out "$T/d" --n $N --dim $D --queries $NQ --metric l2 --threads 2
run "$S" gt --base "$T/d_base.fbin" --queries "$T/d_query.fbin" --k 10 --out "$T/gt.ibin" --threads 2
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) printf "{\"row\":%d,\"tag\":\"r%d\"}\n", i, i }' \
  >"$T/payloads.jsonl"

step "create"
run "$S" collection create "$C" --dim $D --metric l2 --type f32 --index graph --R 32 --L 64 \
  --pq-bytes 16
grep -q "dim 32" "$T/out" || fail "create does not report the dimension"
expect_fail "exist" "$S" collection create "$C" --dim $D

step "upsert $N vectors in batches of 500 (crosses the 1,024 flat threshold)"
run "$S" collection upsert "$C" --vectors "$T/d_base.fbin" --payloads "$T/payloads.jsonl" --batch 500
grep -Eq "upserted $N vectors .*inserts/s" "$T/out" || fail "upsert report"
run "$S" collection stats "$C" --json
[ "$(json_num "$T/out" live)" = "$N" ] || fail "stats: live != $N"
grep -q '"background_cpus"' "$T/out" || fail "stats --json lacks background_cpus"
v=$(json_num "$T/out" index_version)
[ "${v:-0}" -ge 1 ] || fail "no SSD index after crossing the flat threshold (index_version $v)"

step "search $NQ queries with recall"
run "$S" collection search "$C" --queries "$T/d_query.fbin" --k 10 --L 64 --gt "$T/gt.ibin" \
  --threads 2
r=$(recall_of "$T/out")
assert_ge "$r" 0.9 "recall@10 after upsert"
grep -q "QPS" "$T/out" || fail "search report without QPS"
run "$S" collection search "$C" --queries "$T/d_query.fbin" --k 10 --gt "$T/gt.ibin" --json
assert_ge "$(json_num "$T/out" recall_at_k)" 0.9 "recall@10 (json)"

step "get id 42 against row 42 of the input"
run "$S" collection get "$C" --id 42
sed -n 's/^ *vector //p' "$T/out" | tr ' ' '\n' >"$T/got42"
row_floats "$T/d_base.fbin" 42 $D >"$T/want42"
same_floats "$T/got42" "$T/want42" || fail "get 42 differs from row 42"
grep -q 'payload {"row":42,"tag":"r42"}' "$T/out" || fail "get 42: payload"
run "$S" collection get "$C" --id 7,8 --json
grep -q '"tag": "r8"' "$T/out" || fail "get --json: payload of 8"

step "single query (row 42): the nearest hit is id 42 at distance 0, with its payload"
fbin_slice "$T/d_base.fbin" "$T/q42.fbin" 42 1 $D
run "$S" collection search "$C" --queries "$T/q42.fbin" --k 5 --with-payload
awk '$1 == "1" { found = ($2 == "42" && $3 + 0 < 1e-3); exit } END { exit !found }' "$T/out" ||
  fail "single-query search: top hit is not 42 at distance 0"
grep -q '"tag":"r42"' "$T/out" || fail "single-query search: payload"

step "filtered search: row 42 excluded by id, then a range on the payload"
run "$S" collection search "$C" --queries "$T/q42.fbin" --k 5 --filter '{"must_not": [{"has_id": [42]}]}'
awk '$1 == "1" { ok = ($2 != "42"); exit } END { exit !ok }' "$T/out" ||
  fail "filtered search: id 42 came back"
run "$S" collection search "$C" --queries "$T/q42.fbin" --k 5 \
  --filter '{"must": [{"key": "row", "range": {"gte": 100, "lt": 200}}]}'
awk '$1 ~ /^[1-5]$/ && NF == 3 { n++; if ($2 < 100 || $2 >= 200) bad = 1 } END { exit !(n == 5 && !bad) }' "$T/out" ||
  fail "filtered search: a hit outside rows 100..199, or fewer than 5"
expect_fail "filter.*unknown key" "$S" collection search "$C" --queries "$T/q42.fbin" --filter '{"muts": []}'

step "payload index: declared on an upsert, stored, and used by a selective filter (exact)"
expect_fail "not FIELD:TYPE" "$S" collection upsert "$C" --vectors "$T/q42.fbin" --id-offset 42 --payload-index tag
expect_fail "unknown field type" "$S" collection upsert "$C" --vectors "$T/q42.fbin" --id-offset 42 \
  --payload-index tag:text
echo '{"row":42,"tag":"r42"}' >"$T/p42.jsonl"
run "$S" collection upsert "$C" --vectors "$T/q42.fbin" --id-offset 42 --payloads "$T/p42.jsonl" \
  --payload-index tag:keyword
run "$S" collection stats "$C"
grep -q "payload index tag:keyword" "$T/out" || fail "stats: no payload index line"
run "$S" collection search "$C" --queries "$T/q42.fbin" --k 3 --json \
  --filter '{"must": [{"key": "tag", "match": {"any": ["r42", "r7"]}}]}'
grep -q '"mean_filter_candidates": 2.0' "$T/out" || fail "selective filter: not the exact scan (filter_candidates)"

step "delete ids 0..99 (file) and 2999 (--id), then search: none comes back"
seq 0 99 >"$T/del.txt"
run "$S" collection delete "$C" --ids "$T/del.txt" --id 2999 --id 5000000 --durability sync
grep -q "deleted 101 of 102 ids" "$T/out" || fail "delete report"
# check_no_deleted RESULTS: no id 0..99 or 2999 among the results (.ibin).
check_no_deleted() {
  perl -e 'open(F, "<:raw", $ARGV[0]) or die; read(F, my $h, 8); my ($nq, $k) = unpack("L<L<", $h);
           read(F, my $b, $nq * $k * 4); my $bad = 0;
           for my $id (unpack("L<*", $b)) { $bad++ if $id < 100 || $id == 2999 }
           print "$nq x $k results, $bad deleted ids\n"; exit($bad ? 1 : 0);' "$1" ||
    fail "a deleted id came back"
}
run "$S" collection search "$C" --queries "$T/d_query.fbin" --k 10 --out "$T/res.ibin"
check_no_deleted "$T/res.ibin"
# Deleted rows searched for themselves must not find themselves.
fbin_slice "$T/d_base.fbin" "$T/q0_19.fbin" 0 20 $D
run "$S" collection search "$C" --queries "$T/q0_19.fbin" --k 10 --out "$T/res_del.ibin"
check_no_deleted "$T/res_del.ibin"
run "$S" collection stats "$C" --json
[ "$(json_num "$T/out" live)" = "$((N - 101))" ] || fail "stats after delete: live != $((N - 101))"
expect_fail "not found|absent" "$S" collection get "$C" --id 5

step "merge"
run "$S" collection merge "$C"
grep -q "^after:" "$T/out" || fail "merge report"
run "$S" collection stats "$C" --json
[ "$(json_num "$T/out" live)" = "$((N - 101))" ] || fail "stats after merge: live"
[ "$(json_num "$T/out" pending)" = "0" ] || fail "stats after merge: pending != 0"
run "$S" collection search "$C" --queries "$T/d_query.fbin" --k 10 --gt "$T/gt.ibin" \
  --out "$T/res2.ibin"
check_no_deleted "$T/res2.ibin"
# 101 of 3000 ids are gone, so recall against the full ground truth drops a little.
assert_ge "$(recall_of "$T/out")" 0.85 "recall@10 after delete + merge"

step "info on the collection directory"
run "$S" info "$C"
grep -q "collection" "$T/out" && grep -q "live $((N - 101))" "$T/out" || fail "info on a collection"

step "ids from .npy (int64) and --id-offset"
fbin_slice "$T/d_base.fbin" "$T/ten.fbin" 0 10 $D
perl -e 'my $h = "{\x27descr\x27: \x27<i8\x27, \x27fortran_order\x27: False, \x27shape\x27: (10,), }";
         $h .= " " x (64 - 10 - 1 - length($h)) . "\n";
         open(O, ">:raw", $ARGV[0]) or die; print O "\x93NUMPY\x01\x00", pack("S<", length($h)), $h,
         pack("q<*", map { 1000000 + $_ } 0 .. 9);' "$T/ids.npy"
run "$S" collection upsert "$C" --vectors "$T/ten.fbin" --ids "$T/ids.npy"
run "$S" collection upsert "$C" --vectors "$T/ten.fbin" --id-offset 2000000
run "$S" collection get "$C" --id 1000005 --id 2000005
sed -n 's/^ *vector //p' "$T/out" | head -1 | tr ' ' '\n' >"$T/got5"
row_floats "$T/d_base.fbin" 5 $D >"$T/want5"
same_floats "$T/got5" "$T/want5" || fail "get 1000005 differs from row 5"
[ "$(grep -c '^ *vector ' "$T/out")" = 2 ] || fail "get of two upserted ids"

step "an IVF collection"
run "$S" collection create "$T/ivf" --dim $D --index ivf --flat-threshold 1024
run "$S" collection upsert "$T/ivf" --vectors "$T/d_base.fbin" --batch 1000
run "$S" collection search "$T/ivf" --queries "$T/d_query.fbin" --k 10 --gt "$T/gt.ibin"
assert_ge "$(recall_of "$T/out")" 0.8 "IVF recall@10"
run "$S" info "$T/ivf"

step "info on an index directory; collection commands refuse it"
run "$S" build --base "$T/d_base.fbin" --index "$T/idx" --R 16 --L 32 --threads 2
run "$S" info "$T/idx"
grep -q "^index " "$T/out" || fail "info on an index directory"
expect_fail "holds an index" "$S" collection stats "$T/idx"
expect_fail "index already exists" "$S" collection create "$T/idx" --dim $D

step "bad inputs fail with a message"
run "$S" gen --out "$T/w" --n 20 --dim 16 --queries 2 --threads 1
expect_fail "dimension" "$S" collection upsert "$C" --vectors "$T/w_base.fbin"
expect_fail "dimension" "$S" collection search "$C" --queries "$T/w_query.fbin"
expect_fail "no such directory" "$S" collection stats "$T/missing"
expect_fail "no such directory" "$S" collection upsert "$T/missing" --vectors "$T/ten.fbin"
expect_fail "not a collection" "$S" collection stats "$T"
expect_fail "bogus" "$S" collection stats "$C" --bogus
expect_fail "subcommand" "$S" collection
expect_fail "dim" "$S" collection create "$T/nodim"
expect_fail "exist" "$S" collection create "$C" --dim $D --index graph
expect_fail "metric" "$S" collection create "$T/badmetric" --dim $D --metric hamming
expect_fail "index" "$S" collection create "$T/badindex" --dim $D --index lsh
expect_fail "durability|sync" "$S" collection upsert "$C" --vectors "$T/ten.fbin" --durability maybe
expect_fail "background_cpus" "$S" collection upsert "$C" --vectors "$T/ten.fbin" --background-cpus 5000
seq 0 4 >"$T/five.txt"
expect_fail "5 ids" "$S" collection upsert "$C" --vectors "$T/ten.fbin" --ids "$T/five.txt"
printf '1\nx2\n' >"$T/badids.txt"
expect_fail "line 2" "$S" collection delete "$C" --ids "$T/badids.txt"
expect_fail "no ids" "$S" collection delete "$C"
perl -e 'open(O, ">:raw", $ARGV[0]) or die; print O pack("L<L<", 2, 32),
         pack("f<*", (0.5) x 32), pack("f<*", (0.5) x 7, 9**9**9 / 9**9**9, (0.5) x 24);' "$T/nan.fbin"
expect_fail "nan" "$S" collection upsert "$C" --vectors "$T/nan.fbin" --id-offset 7000000
run "$S" collection stats "$C" --json
[ "$(json_num "$T/out" live)" = "$((N - 101 + 20))" ] || fail "a failed upsert changed the count"

echo "PASS: collection_cli_test"
