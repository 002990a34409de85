#!/usr/bin/env bash
# The graph ablation (OctopusANN's techniques, OPQ, the default) and the IVF
# index on the real data sets of bench/scripts/real_data.py: GloVe-100
# (340k x 100, cosine, 32-byte codes) and Fashion-MNIST (60k x 784, L2,
# 96-byte codes). Writes bench/results/graph_ablation_{glove100,fmnist}.* and
# ivf_{glove100,fmnist}.*.
# env: STRATA (binary), LS (graph L sweep), THREADS (1,2).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
export STRATA=${STRATA:-$root/build/release/tools/cli/strata}
export LS=${LS:-10,15,20,30,50,75,100,150,200}
export THREADS=${THREADS:-1,2}
lock=/tmp/strata-bench.lock
flock "$lock" "$root/bench/scripts/graph_ablation.sh" glove100 32 cosine
flock "$lock" "$root/bench/scripts/graph_ablation.sh" fmnist 96 l2
# ivf_bench.sh takes the lock per step itself.
NPROBE=1,2,3,4,6,8,12,16,24,32,48 "$root/bench/scripts/ivf_bench.sh" glove100 cosine glove100
NPROBE=1,2,3,4,6,8,12,16,24 "$root/bench/scripts/ivf_bench.sh" fmnist l2 fmnist
