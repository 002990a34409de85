#!/usr/bin/env bash
# cpp-httplib against Boost.Beast under wrk on loopback, serving the same
# handler (handler.h: parse a Qdrant search body, answer 10 points), so that
# the runs differ only in the HTTP library: QPS, latency and the server's CPU
# time per request (utime + stime from /proc over the measured run).
# usage: run_candidates.sh BODIES.jsonl OUT_DIR [SECONDS] [ROUNDS]
set -euo pipefail
bodies=$(realpath "$1")
out=$2
secs=${3:-15}
rounds=${4:-3}
here=$(cd "$(dirname "$0")" && pwd)
build=$out/build
mkdir -p "$out"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" >/dev/null
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
ticks_per_s=$(getconf CLK_TCK)
for rep in $(seq "$rounds"); do
  for server in httplib beast; do
    for cfg in ${CONFIGS:-2:2 2:16 8:16}; do
      t=${cfg%%:*}
      c=${cfg##*:}
      port=$(free_port)
      "$build/${server}_server" "$port" "$t" &
      pid=$!
      for _ in $(seq 50); do
        curl -sf -X POST "http://127.0.0.1:$port/x" -d '{"vector":[1]}' >/dev/null && break
        sleep 0.1
      done
      url="http://127.0.0.1:$port/collections/bench/points/search"
      wrk -t1 -c"$c" -d3s -s "$here/../search.lua" "$url" -- "$bodies" >/dev/null
      before=$(cpu_ticks "$pid")
      wrk -t1 -c"$c" -d"${secs}s" --latency -s "$here/../search.lua" "$url" -- "$bodies" \
        > "$out/${server}_t${t}_c${c}_rep$rep.txt"
      after=$(cpu_ticks "$pid")
      rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status")
      kill "$pid"
      wait "$pid" 2>/dev/null || true
      tail -1 "$out/${server}_t${t}_c${c}_rep$rep.txt" | /usr/bin/python3 -c "
import json, sys
r = json.loads(sys.stdin.read())
r.update(server='$server', threads=$t, connections=$c, rep=$rep, peak_rss_kb=$rss_kb,
         cpu_us_per_request=($after - $before) / $ticks_per_s * 1e6 / max(1, r['requests']))
print(json.dumps(r))" > "$out/${server}_t${t}_c${c}_rep$rep.json"
    done
  done
done
/usr/bin/python3 - "$out" <<'PY'
import glob, json, os, statistics, sys
rows = {}
for f in glob.glob(os.path.join(sys.argv[1], "*_rep*.json")):
    r = json.load(open(f))
    rows.setdefault((r["threads"], r["connections"], r["server"]), []).append(r)
print("| server threads | wrk connections | library | QPS median (min–max) | p50 ms | p99 ms | server CPU µs/request | peak RSS MiB |")
print("|---|---|---|---|---|---|---|---|")
for key in sorted(rows):
    rs = rows[key]
    q = [r["qps"] for r in rs]
    med = lambda k: statistics.median(r[k] for r in rs)
    print(f"| {key[0]} | {key[1]} | {key[2]} | {statistics.median(q):.0f} ({min(q):.0f}–{max(q):.0f}) | "
          f"{med('p50_ms'):.3f} | {med('p99_ms'):.3f} | {med('cpu_us_per_request'):.1f} | "
          f"{med('peak_rss_kb') / 1024:.1f} |")
PY
