#!/usr/bin/python3
"""Write the harness's `random-xs-clustered` dataset locally.

The harness downloads random-xs-clustered (benchmark/datasets.py
RandomClusteredDS: clu-random.fbin, queries_1000_20.fbin, clu_random_gt100
under data/random-clustered10000/) from a URL that this machine cannot
reach. This builds the same files from `random-xs` (generated locally by the
harness's RandomDS.prepare) the way the harness's own generator does it
(neurips23/runbooks/clustered_data_gen.py: k-means, then the points sorted
by cluster), with its cluster_and_permute, 32 clusters and a fixed seed; the
queries are random-xs's. clustered_runbook.yaml's random-xs-clustered entry
inserts 32 contiguous ranges of that order with fixed boundaries; ours are
not the upstream file's clusters, so a range is one cluster or the end of
one and the start of the next.

Run from the root of the harness copy.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from benchmark.datasets import DATASETS  # noqa: E402
from neurips23.runbooks.clustered_data_gen import cluster_and_permute  # noqa: E402
from compute_gt import exact_knn, write_gt  # noqa: E402

NUM_CLUSTERS = 32
SEED = 1


def write_fbin(path, x):
    with open(path, "wb") as f:
        np.array(x.shape, dtype=np.uint32).tofile(f)
        np.ascontiguousarray(x, dtype=np.float32).tofile(f)


def main():
    src = DATASETS["random-xs"]()
    if not os.path.exists(os.path.join(src.basedir, src.ds_fn)):
        src.prepare()
    data = np.asarray(src.get_dataset(), dtype=np.float32)
    queries = np.asarray(src.get_queries(), dtype=np.float32)

    dst = DATASETS["random-xs-clustered"]()
    assert (dst.nb, dst.nq, dst.d) == (data.shape[0], queries.shape[0], data.shape[1])

    np.random.seed(SEED)
    offsets, permutation = cluster_and_permute(data, NUM_CLUSTERS)
    clustered = data[permutation, :]

    os.makedirs(dst.basedir, exist_ok=True)
    write_fbin(os.path.join(dst.basedir, dst.ds_fn), clustered)
    write_fbin(os.path.join(dst.basedir, dst.qs_fn), queries)
    ids, dists = exact_knn(clustered, queries, 100, "l2")
    write_gt(os.path.join(dst.basedir, dst.gt_fn), ids.astype(np.uint32), dists)
    print(f"make_clustered.py: {dst.basedir}: {clustered.shape[0]} points in {NUM_CLUSTERS} "
          f"clusters (offsets {offsets.tolist()}), {queries.shape[0]} queries")


if __name__ == "__main__":
    main()
