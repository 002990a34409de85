#!/usr/bin/env bash
# Search throughput of `strata serve` under wrk against the same collection
# searched in-process (`strata collection search`), on loopback.
# usage: bench/server/run_search_bench.sh STRATA_BIN WORKDIR [N] [DIM] [SECONDS]
# Writes WORKDIR/results/*.json|txt. Builds WORKDIR/data (collection
# `bench`: N synthetic cosine vectors, `strata gen`) once and reuses it.
set -euo pipefail
strata=$(realpath "$1")
work=$2
n=${3:-100000}
dim=${4:-128}
secs=${5:-20}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/results"
cd "$work"
res=$work/results

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
start_server() {  # start_server THREADS MAX_QUEUE
  port=$(free_port)
  "$strata" serve --data data --port "$port" --threads "$1" --max-queue "$2" 2>>"$res/serve.log" &
  server_pid=$!
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && return 0; sleep 0.1; done
  echo "server did not start" >&2; exit 1
}
stop_server() { kill -TERM "$server_pid"; wait "$server_pid"; }

if [ ! -d data/collections/bench ]; then
  "$strata" gen --out synth --n "$n" --dim "$dim" --queries 1000 --metric cosine --gt-k 10
  start_server 2 64
  curl -sf -X PUT "http://127.0.0.1:$port/collections/bench" -H 'content-type: application/json' \
    -d "{\"vectors\": {\"size\": $dim, \"distance\": \"Cosine\"}}" >/dev/null
  stop_server
  # Bulk load from the shell (the server's id log is for count/scroll, not
  # needed by search), then one merge so the whole set is in the SSD index.
  /usr/bin/time -v "$strata" collection upsert data/collections/bench --vectors synth_base.fbin \
    2> "$res/load_time.txt"
  "$strata" collection merge data/collections/bench --json > "$res/merge.json"
  /usr/bin/python3 "$here/fbin_to_bodies.py" synth_query.fbin bodies.jsonl --limit 10
fi
"$strata" collection stats data/collections/bench --json > "$res/collection_stats.json"

# The 1000 queries repeated 10 times (in-process runs then last about as
# long as wrk's), and recall on the original 1000.
if [ ! -f queries10x.fbin ]; then
  /usr/bin/python3 - <<'PY'
import struct
d = open("synth_query.fbin", "rb").read()
n, dim = struct.unpack("<ii", d[:8])
open("queries10x.fbin", "wb").write(struct.pack("<ii", 10 * n, dim) + d[8:] * 10)
PY
fi
"$strata" collection search data/collections/bench --queries synth_query.fbin --k 10 --L 50 \
  --threads 2 --gt synth_gt.ibin --json > "$res/inprocess_recall.json"

# Interleaved, because the 2 cores may be shared with other work: each round
# runs in-process search (k=10, L=50 = the server's default; with and
# without reading payloads, which the server always does for ids), then the
# server under wrk (1 thread) for each workers:connections pair.
for rep in $(seq "${ROUNDS:-3}"); do
  "$strata" collection search data/collections/bench --queries queries10x.fbin --k 10 --L 50 \
    --threads 2 --json > "$res/inprocess_threads2_rep$rep.json"
  "$strata" collection search data/collections/bench --queries queries10x.fbin --k 10 --L 50 \
    --threads 2 --with-payload --json > "$res/inprocess_payload_threads2_rep$rep.json"
  # CONFIGS: server workers:wrk connections.
  for cfg in ${CONFIGS:-2:2 2:4 4:4}; do
    t=${cfg%%:*}
    c=${cfg##*:}
    start_server "$t" 64
    url="http://127.0.0.1:$port/collections/bench/points/search"
    wrk -t1 -c"$c" -d3s -s "$here/search.lua" "$url" -- "$work/bodies.jsonl" >/dev/null  # warm-up
    wrk -t1 -c"$c" -d"${secs}s" --latency -s "$here/search.lua" "$url" -- "$work/bodies.jsonl" \
      > "$res/wrk_threads${t}_c${c}_rep$rep.txt"
    tail -1 "$res/wrk_threads${t}_c${c}_rep$rep.txt" > "$res/wrk_threads${t}_c${c}_rep$rep.json"
    curl -sf "http://127.0.0.1:$port/metrics" > "$res/metrics_threads${t}_c${c}_rep$rep.txt"
    stop_server
  done
  uptime >> "$res/load_during_runs.txt"
done
/usr/bin/python3 "$here/summarize.py" "$res" | tee "$res/summary.md"
