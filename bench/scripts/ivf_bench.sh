#!/usr/bin/env bash
# IVF index (RaBitQ-SSD) measurements on a data set already in data/:
# build (time, peak RSS, disk), then `strata bench` sweeps of nprobe.
# usage: bench/scripts/ivf_bench.sh NAME METRIC TAG [build flags...]
#   e.g. bench/scripts/ivf_bench.sh synth1m l2 synth1m
#        bench/scripts/ivf_bench.sh synth1m l2 synth1m_dm64 --prefix-bits 64
# env: K (10), NPROBE (sweep list), PIPELINES (full), THREADS (1,2),
#      SKIP_BUILD=1 to reuse the index, IDX_TAG (index of another tag),
#      BENCH_FLAGS (extra `strata bench` flags), STRATA (binary).
# Writes bench/results/ivf_<TAG>.{log,json,csv}. Every timed step runs under
# flock /tmp/strata-bench.lock (one benchmark at a time on the machine).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
name=$1; metric=$2; tag=$3; shift 3
strata=${STRATA:-$root/build/tools/cli/strata}
read -r -a bench_flags <<< "${BENCH_FLAGS:-}"
data=${DATA:-$root/data}
k=${K:-10}
nprobe=${NPROBE:-4,6,8,10,12,16,20,24,32,48,64}
pipelines=${PIPELINES:-full}
threads=${THREADS:-1,2}
idx="$data/idx_ivf_${IDX_TAG:-$tag}"
out="$root/bench/results/ivf_${tag}"
lock=/tmp/strata-bench.lock
{
  echo "# $(date -u '+%F %T UTC'), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  if [ "${SKIP_BUILD:-0}" != 1 ]; then
    echo "\$ strata build --type ivf --base $data/${name}_base.fbin --index $idx --metric $metric --threads 2 $*"
    flock "$lock" "$strata" build --type ivf --base "$data/${name}_base.fbin" --index "$idx" \
      --metric "$metric" --threads 2 "$@"
    echo "# disk: $(du -b "$idx"/ivf.* | awk '{s += $1} END {print s}') bytes"
  fi
  echo "\$ strata bench --index $idx --queries $data/${name}_query.fbin --gt $data/${name}_gt.ibin --k $k --nprobe $nprobe --pipeline $pipelines --threads $threads --target-recall 0.9 ${BENCH_FLAGS:-}"
  flock "$lock" "$strata" bench --index "$idx" --queries "$data/${name}_query.fbin" \
    --gt "$data/${name}_gt.ibin" --k "$k" --nprobe "$nprobe" --pipeline "$pipelines" \
    --threads "$threads" --target-recall 0.9 --json "$out.json" --csv "$out.csv" \
    ${bench_flags[@]+"${bench_flags[@]}"}
  echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
} 2>&1 | tee "$out.log"
