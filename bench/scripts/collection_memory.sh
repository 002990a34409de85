#!/usr/bin/env bash
# Cold / warm / memory-capped searches of one collection: runs
# collection_memory_bench once without a cap and once inside a memory cgroup
# per limit, each a fresh process (so each starts cold), and collects the
# rows in one JSON file with the cgroup's own peak usage and fail count.
#
# usage: bench/scripts/collection_memory.sh OUT.json DIR QUERIES GT [LIMIT ...] -- [bench args]
#   LIMIT: a cgroup memory limit (2G, 1G, 512M, ...); "none" runs uncapped.
#   Default limits: none 2G 1G 512M. Needs a writable cgroup v1 memory
#   hierarchy (/sys/fs/cgroup/memory) or cgroup v2 (/sys/fs/cgroup); without
#   one the capped runs are skipped and say so.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$1 dir=$2 queries=$3 gt=$4
shift 4
limits=()
while [[ $# -gt 0 && $1 != -- ]]; do limits+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
[[ ${#limits[@]} -eq 0 ]] && limits=(none 2G 1G 512M)
bench=${BENCH:-$root/build/release/bench/macro/collection_memory_bench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

to_bytes() {
  local v=$1
  case $v in
    *G) echo $(( ${v%G} * 1024 * 1024 * 1024 )) ;;
    *M) echo $(( ${v%M} * 1024 * 1024 )) ;;
    *) echo "$v" ;;
  esac
}

cg_v1=/sys/fs/cgroup/memory
i=0
for limit in "${limits[@]}"; do
  row=$tmp/run$i.json
  i=$((i + 1))
  if [[ $limit == none ]]; then
    "$bench" --dir "$dir" --queries "$queries" --gt "$gt" --json "$row" "$@"
    continue
  fi
  bytes=$(to_bytes "$limit")
  if [[ -w $cg_v1 ]]; then
    cg=$cg_v1/strata_bench_$$_$limit
    mkdir -p "$cg"
    echo "$bytes" > "$cg/memory.limit_in_bytes"
    sh -c "echo \$\$ > $cg/cgroup.procs && exec \"\$0\" \"\$@\"" \
      "$bench" --dir "$dir" --queries "$queries" --gt "$gt" --json "$row" --cgroup-limit "$limit" "$@" \
      || echo "collection_memory: run under $limit failed (rc $?)" >&2
    peak=$(cat "$cg/memory.max_usage_in_bytes") failcnt=$(cat "$cg/memory.failcnt")
    rmdir "$cg" 2>/dev/null || true
  elif [[ -w /sys/fs/cgroup/cgroup.subtree_control ]]; then
    cg=/sys/fs/cgroup/strata_bench_$$_$limit
    mkdir -p "$cg"
    echo "$bytes" > "$cg/memory.max"
    sh -c "echo \$\$ > $cg/cgroup.procs && exec \"\$0\" \"\$@\"" \
      "$bench" --dir "$dir" --queries "$queries" --gt "$gt" --json "$row" --cgroup-limit "$limit" "$@" \
      || echo "collection_memory: run under $limit failed (rc $?)" >&2
    peak=$(cat "$cg/memory.peak" 2>/dev/null || echo 0)
    failcnt=$(awk '/^max /{print $2}' "$cg/memory.events")
    rmdir "$cg" 2>/dev/null || true
  else
    echo "collection_memory: no writable memory cgroup here; skipping the $limit run" >&2
    continue
  fi
  [[ -f $row ]] && /usr/bin/python3 - "$row" "$peak" "$failcnt" <<'EOF'
import json, sys
path, peak, failcnt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
j = json.load(open(path))
j["cgroup_peak_mib"] = peak / 2**20
j["cgroup_failcnt"] = failcnt
json.dump(j, open(path, "w"), indent=1)
EOF
done
/usr/bin/python3 - "$out" "$tmp"/run*.json <<'EOF'
import json, sys
runs = [json.load(open(p)) for p in sorted(sys.argv[2:], key=lambda p: int(p.rsplit("run", 1)[1][:-5]))]
json.dump({"runs": runs}, open(sys.argv[1], "w"), indent=1)
print(f"wrote {len(runs)} runs to {sys.argv[1]}")
EOF
