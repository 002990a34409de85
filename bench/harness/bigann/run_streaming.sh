#!/usr/bin/env bash
# Runs big-ann-benchmarks' NeurIPS'23 streaming track against Strata.
#
#   bench/harness/bigann/run_streaming.sh [simple] [clustered]   (default: both)
#
# 1. copies the harness snapshot ($BIGANN_HARNESS, default
#    ../shared/peers/big-ann-benchmarks beside the repository) to
#    $BIGANN_WORK/harness (default /tmp/strata-bigann/harness), fresh each run;
# 2. lays in our algorithm as neurips23/streaming/strata/ (strata_streaming.py,
#    config.yaml);
# 3. generates random-xs with the harness's own generator (create_dataset.py
#    when the snapshot has one, else RandomDS.prepare, which is what it calls)
#    and random-xs-clustered from it (make_clustered.py: the upstream file is a
#    download);
# 4. computes each runbook's per-step ground truth with the harness's
#    benchmark/streaming/compute_gt.py, its DiskANN compute_groundtruth call
#    replaced by our numpy brute force (compute_gt.py, same flags, same
#    stepN.gt100 format) through its --gt_cmdline_tool option;
# 5. runs run.py --nodocker --neurips23track streaming --algorithm strata on
#    simple_runbook.yaml (random-xs) and clustered_runbook.yaml
#    (random-xs-clustered), then data_export.py, and prints mean recall and
#    time per step (summarize.py; $BIGANN_WORK/summary.md, summary.json).
#
# Environment: STRATA_PYTHONPATH (directory holding the strata package;
# default the first one under build/ with strata/_strata*.so), PYTHON
# (default /usr/bin/python3: the harness needs Debian's numpy, scipy, h5py,
# yaml, psutil, docker, colors, requests, sklearn, pandas, matplotlib),
# BIGANN_CPUS (taskset CPU list for the runs, default 0; empty: no pinning),
# BIGANN_NICE (default 19).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
harness_src="${BIGANN_HARNESS:-$repo/../shared/peers/big-ann-benchmarks}"
work="${BIGANN_WORK:-/tmp/strata-bigann}"
py="${PYTHON:-/usr/bin/python3}"
cpus="${BIGANN_CPUS-0}"
nice_level="${BIGANN_NICE:-19}"

runbooks=("$@")
[ ${#runbooks[@]} -eq 0 ] && runbooks=(simple clustered)

die() { echo "run_streaming.sh: $*" >&2; exit 1; }

[ -f "$harness_src/run.py" ] || die "no harness at $harness_src (set BIGANN_HARNESS)"
[ -x "$py" ] || die "no interpreter $py (set PYTHON)"

if [ -z "${STRATA_PYTHONPATH:-}" ]; then
  so="$(find "$repo/build" -path '*/strata/_strata*.so' 2>/dev/null | sort | head -n 1 || true)"
  [ -n "$so" ] || die "no strata/_strata*.so under $repo/build (build it, or set STRATA_PYTHONPATH)"
  STRATA_PYTHONPATH="$(dirname "$(dirname "$so")")"
fi
export PYTHONPATH="$STRATA_PYTHONPATH${PYTHONPATH:+:$PYTHONPATH}"
"$py" -c 'import strata; print("strata", strata.__version__, "from", strata.__file__)' ||
  die "cannot import strata from $STRATA_PYTHONPATH with $py"

run() {  # heavy commands: niced, pinned
  local pre=(nice -n "$nice_level")
  [ -n "$cpus" ] && pre+=(taskset -c "$cpus")
  "${pre[@]}" "$@"
}

# 1-2. A fresh copy with our algorithm in it.
mkdir -p "$work"
h="$work/harness"
rm -rf "$h"
cp -r "$harness_src" "$h"
chmod -R u+w "$h"
mkdir -p "$h/neurips23/streaming/strata"
cp "$here/strata_streaming.py" "$here/config.yaml" "$h/neurips23/streaming/strata/"
cd "$h"

# 3. Datasets.
if [ -f create_dataset.py ]; then
  run "$py" create_dataset.py --dataset random-xs
else
  run "$py" -c 'from benchmark.datasets import DATASETS; DATASETS["random-xs"]().prepare()'
fi

declare -a specs=()
for rb in "${runbooks[@]}"; do
  case "$rb" in
    simple) specs+=("random-xs:neurips23/runbooks/simple_runbook.yaml") ;;
    clustered) specs+=("random-xs-clustered:neurips23/runbooks/clustered_runbook.yaml") ;;
    *) die "unknown runbook '$rb' (simple, clustered)" ;;
  esac
done
for rb in "${runbooks[@]}"; do
  [ "$rb" = clustered ] && run "$py" "$here/make_clustered.py"
done

status=0
for spec in "${specs[@]}"; do
  ds="${spec%%:*}"
  rbp="${spec#*:}"
  rbn="$(basename "$rbp")"
  # 4. Ground truth per search step.
  run "$py" benchmark/streaming/compute_gt.py --dataset "$ds" --runbook_file "$rbp" \
    --gt_cmdline_tool "$py $here/compute_gt.py" > "$work/gt-$ds-$rbn.log" 2>&1 ||
    { tail -n 20 "$work/gt-$ds-$rbn.log"; die "ground truth for $ds / $rbn failed"; }
  read -r gtdir want < <("$py" -c 'import sys
from benchmark.datasets import DATASETS
from benchmark.streaming.compute_gt import gt_dir
from benchmark.streaming.load_runbook import load_runbook
ds = DATASETS[sys.argv[1]]()
_, rb = load_runbook(sys.argv[1], ds.nb, sys.argv[2])
print(gt_dir(ds, sys.argv[2]), sum(e["operation"] == "search" for e in rb))' "$ds" "$rbp")
  have="$(ls "$gtdir"/step*.gt100 2>/dev/null | wc -l)"
  [ "$have" -eq "$want" ] || die "$have stepN.gt100 files in $gtdir, runbook has $want searches"
  echo "ground truth: $have step files in $gtdir"

  # 5. The run. run.py's worker process does not pass its exit status on, so
  #    success is judged by the result files.
  log="$work/run-$ds-$rbn.log"
  echo "run.py: $ds, $rbn (log $log)"
  t0=$(date +%s.%N)
  run "$py" run.py --nodocker --neurips23track streaming --algorithm strata --dataset "$ds" \
    --runbook_path "$rbp" --force > "$log" 2>&1 || status=1
  t1=$(date +%s.%N)
  resdir="results/neurips23/streaming/$rbn/$ds/10/strata"
  n="$(ls "$resdir"/*.hdf5 2>/dev/null | wc -l)"
  echo "run.py: $n result files in $resdir, $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
  if grep -q Traceback "$log"; then
    grep -B2 -A20 Traceback "$log" | tail -n 40
    status=1
  fi
  [ "$n" -ge 1 ] || status=1
done

# Scoring.
run "$py" data_export.py --output "$work/res.csv" > "$work/data_export.log" 2>&1 ||
  { tail -n 30 "$work/data_export.log"; die "data_export.py failed"; }
echo "data_export.py: $work/res.csv"
"$py" "$here/summarize.py" --csv "$work/res.csv" --out "$work/summary.md" --json "$work/summary.json" \
  ${BIGANN_STEPS:+--steps} "${specs[@]}" || status=1
exit $status
