#!/usr/bin/env bash
# Side-by-side random-read benchmark: `strata iobench` against fio's io_uring
# engine on the same file, in the same run.
#
#   bench/scripts/iobench_vs_fio.sh [--file data/iobench.dat] [--size 2G]
#       [--seconds 5] [--repeat 3] [--strata build/tools/cli/strata]
#       [--out bench/results]
#
# Steps: (1) create/extend the file with strata (non-zero data, O_DIRECT,
# fsync); (2) fio --direct=1 --ioengine=io_uring --rw=randread --bs=4k at QD 1
# and 64 (plain, as in the issue, and with --fixedbufs --registerfiles), each
# followed at once by strata's uring engine at the same QD so both see the
# device in the same state, the whole sequence repeated --repeat times and
# the median of each number reported (shared machines are noisy); (3) the
# full strata matrix: engines uring, aio,
# pread x threads 1,2 x QD 1,4,16,64,128. Writes OUT/iobench_vs_fio.md and
# OUT/iobench_vs_fio.json (raw fio and strata numbers included).
set -euo pipefail

FILE=data/iobench.dat
SIZE=2G
SECS=5
REPEAT=3
STRATA=build/tools/cli/strata
OUT=bench/results
while [[ $# -gt 0 ]]; do
  case "$1" in
    --file) FILE=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --seconds) SECS=$2; shift 2 ;;
    --repeat) REPEAT=$2; shift 2 ;;
    --strata) STRATA=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
command -v fio >/dev/null || { echo "fio not found (apt-get install fio)" >&2; exit 1; }
[[ -x $STRATA ]] || { echo "strata binary not found at $STRATA (use --strata)" >&2; exit 1; }
PY=/usr/bin/python3
# fio reads a bare "0.5" as 0 (= no time limit): give it milliseconds.
FIO_RUNTIME_MS=$(awk -v s="$SECS" 'BEGIN { printf "%d", s * 1000 }')
[[ $FIO_RUNTIME_MS -gt 0 ]] || { echo "--seconds must be positive" >&2; exit 2; }
mkdir -p "$(dirname "$FILE")" "$OUT"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "== preparing $FILE ($SIZE)" >&2
"$STRATA" iobench --file "$FILE" --size "$SIZE" --engine pread --qd 1 --seconds 0.1 >/dev/null

run_fio() {  # name qd rep extra-args...
  local name=$1 qd=$2 rep=$3; shift 3
  echo "== fio $name qd=$qd (run $rep)" >&2
  fio --name=randread --filename="$FILE" --size="$SIZE" --direct=1 --ioengine=io_uring \
      --rw=randread --bs=4k --iodepth="$qd" --numjobs=1 --norandommap --lat_percentiles=1 \
      --time_based --runtime="${FIO_RUNTIME_MS}ms" --group_reporting --output-format=json "$@" \
      > "$TMP/fio_${name}_qd${qd}_r${rep}.json"
}
run_strata() {  # name engine threads qds
  echo "== strata $1 engine=$2 threads=$3 qd=$4" >&2
  "$STRATA" iobench --file "$FILE" --size "$SIZE" --engine "$2" --threads "$3" --qd "$4" \
      --seconds "$SECS" --json > "$TMP/strata_$1.json"
}

for rep in $(seq 1 "$REPEAT"); do
  for qd in 1 64; do
    run_fio plain "$qd" "$rep"
    run_strata "pair_qd${qd}_r$rep" uring 1 "$qd"
    run_fio fixed "$qd" "$rep" --fixedbufs --registerfiles
  done
done
run_strata matrix all 1,2 1,4,16,64,128

"$PY" - "$TMP" "$OUT" "$FILE" "$SIZE" "$SECS" "$REPEAT" <<'PYEOF'
import json, os, platform, statistics, subprocess, sys, time
tmp, out, path, size, secs, repeat = sys.argv[1:7]
reps = range(1, int(repeat) + 1)

def fio_run(name, qd, rep):
    j = json.load(open(f"{tmp}/fio_{name}_qd{qd}_r{rep}.json"))
    r = j["jobs"][0]["read"]
    lat = r["lat_ns"]
    pct = lat.get("percentile", {})
    return {"tool": "fio", "variant": name, "qd": qd, "threads": 1, "iops": r["iops"],
            "mbps": r["bw_bytes"] / 1e6, "mean_us": lat["mean"] / 1e3,
            "p50_us": pct.get("50.000000", 0) / 1e3, "p99_us": pct.get("99.000000", 0) / 1e3,
            "cpu_percent": j["jobs"][0]["usr_cpu"] + j["jobs"][0]["sys_cpu"],
            "fio_version": j.get("fio version", "")}

def strata(name):
    return json.load(open(f"{tmp}/strata_{name}.json"))

KEYS = ("iops", "mbps", "mean_us", "p50_us", "p99_us", "cpu_percent")
def median(runs):
    m = dict(runs[0])
    for k in KEYS:
        m[k] = statistics.median(r[k] for r in runs)
    m["runs"] = runs
    return m

pairs = []
for qd in (1, 64):
    pairs.append({"qd": qd,
                  "fio": median([fio_run("plain", qd, r) for r in reps]),
                  "fio_fixed": median([fio_run("fixed", qd, r) for r in reps]),
                  "strata": median([strata(f"pair_qd{qd}_r{r}")[0] for r in reps])})
matrix = strata("matrix")

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except Exception:
        return ""
env = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "kernel": platform.release(),
       "cpus": os.cpu_count(), "file": path, "size": size, "seconds_per_setting": float(secs),
       "filesystem": sh(f"df --output=source,fstype,size '{path}' | tail -1"),
       "repeats": int(repeat),
       "fio": pairs[0]["fio"]["fio_version"], "loadavg": sh("cat /proc/loadavg")}
json.dump({"environment": env, "pairs": pairs, "matrix": matrix},
          open(f"{out}/iobench_vs_fio.json", "w"), indent=1)

L = []
L.append("# strata iobench vs fio (random 4 KiB O_DIRECT reads)\n")
L.append("Generated by `bench/scripts/iobench_vs_fio.sh`; raw numbers in `iobench_vs_fio.json`.\n")
L.append("| | |\n|---|---|")
for k, v in env.items():
    L.append(f"| {k} | `{v}` |")
L.append("")
L.append("## One thread, same file, back to back\n")
L.append("fio: `fio --direct=1 --ioengine=io_uring --rw=randread --bs=4k --iodepth=QD "
         "--norandommap --time_based --runtime=S` (\"fio+fixed\" adds `--fixedbufs "
         "--registerfiles`); strata: `strata iobench --engine uring --threads 1 --qd QD`. "
         "Latency is submission to completion (fio `lat`). Each number is the median of "
         f"{repeat} alternating runs.\n")
L.append("| QD | fio IOPS | fio+fixed IOPS | strata IOPS | strata / fio | fio mean us | "
         "strata mean us | strata / fio | fio p50 / p99 us | strata p50 / p99 us |")
L.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for p in pairs:
    f, x, s = p["fio"], p["fio_fixed"], p["strata"]
    L.append(f"| {p['qd']} | {f['iops']:.0f} | {x['iops']:.0f} | {s['iops']:.0f} | "
             f"{s['iops'] / f['iops']:.3f} | {f['mean_us']:.1f} | {s['mean_us']:.1f} | "
             f"{s['mean_us'] / f['mean_us']:.3f} | {f['p50_us']:.1f} / {f['p99_us']:.1f} | "
             f"{s['p50_us']:.1f} / {s['p99_us']:.1f} |")
L.append("")
L.append("Targets: QD 64 IOPS ratio >= 0.90; QD 1 mean latency ratio <= 1.10.\n")
L.append("## All engines\n")
L.append("| engine | threads | QD | IOPS | MB/s | mean us | p50 us | p99 us | CPU % | queue |")
L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
for r in matrix:
    L.append(f"| {r['engine']} | {r['threads']} | {r['qd']} | {r['iops']:.0f} | {r['mbps']:.1f} | "
             f"{r['mean_us']:.1f} | {r['p50_us']:.1f} | {r['p99_us']:.1f} | "
             f"{r['cpu_percent']:.0f} | {r['engine_description']} |")
open(f"{out}/iobench_vs_fio.md", "w").write("\n".join(L) + "\n")
print(f"wrote {out}/iobench_vs_fio.md and {out}/iobench_vs_fio.json")
PYEOF
