#!/usr/bin/python3
"""Exact k-NN ground truth with numpy, as a drop-in for DiskANN's
compute_groundtruth tool.

big-ann-benchmarks' benchmark/streaming/compute_gt.py writes, for every
search step of a runbook, the active points (stepN.data, DiskANN .bin: u32 n,
u32 d, n*d values) and their tags (stepN.tags: u32 n, u32 1, n u32), then
runs `--gt_cmdline_tool` with DiskANN's flags:

    --dist_fn l2|mips|cosine --data_type float|int8|uint8 --K 100
    --query_file Q --base_file B --gt_file G [--tags_file T]

This program takes the same flags and writes G in the format the harness
reads (benchmark/dataset_io.py knn_result_read): u32 nq, u32 K, nq*K int32
ids (the tags when a tags file is given), nq*K float32 distances, nearest
first. Distances are squared L2 for l2, -<q, x> for mips and 1 - cos for
cosine, computed in float64; equal distances are ordered by id. When fewer
than K points exist, the rest of a row is id 0xFFFFFFFE (-2 as int32, which
no result and no harness sentinel uses) with distance +inf.

Also usable as a module: exact_knn(base, queries, k, metric) -> (ids, dists).
"""

import argparse
import sys

import numpy as np

PAD_ID = 0xFFFFFFFE

_DTYPES = {"float": np.float32, "float32": np.float32, "int8": np.int8, "uint8": np.uint8}


def read_bin(path, dtype):
    """A DiskANN/big-ann .bin matrix: u32 rows, u32 cols, then the values."""
    header = np.fromfile(path, dtype=np.uint32, count=2)
    if header.size != 2:
        raise ValueError(f"{path}: no 8-byte header")
    n, d = int(header[0]), int(header[1])
    data = np.fromfile(path, dtype=dtype, offset=8)
    if data.size != n * d:
        raise ValueError(f"{path}: header says {n} x {d}, file holds {data.size} values")
    return data.reshape(n, d)


def write_gt(path, ids, dists):
    nq, k = ids.shape
    with open(path, "wb") as f:
        np.array([nq, k], dtype=np.uint32).tofile(f)
        np.ascontiguousarray(ids, dtype=np.uint32).tofile(f)
        np.ascontiguousarray(dists, dtype=np.float32).tofile(f)


def exact_knn(base, queries, k, metric="l2", block=4096):
    """Exact top-k of every query over base rows: (ids int64, dists float64),
    shape (nq, k), row ids 0..n-1, padded with -1 / +inf past n."""
    base = np.asarray(base, dtype=np.float64)
    queries = np.asarray(queries, dtype=np.float64)
    n, nq = base.shape[0], queries.shape[0]
    if metric == "cosine":
        base = base / np.maximum(np.linalg.norm(base, axis=1, keepdims=True), 1e-30)
        queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-30)
    base_sq = np.einsum("ij,ij->i", base, base)
    kk = min(k, n)
    out_ids = np.full((nq, k), -1, dtype=np.int64)
    out_d = np.full((nq, k), np.inf, dtype=np.float64)
    if kk == 0:
        return out_ids, out_d
    # Bound the (block x n) distance matrix to about 512 MiB of float64.
    block = max(1, min(block, (64 << 20) // max(n, 1)))
    for q0 in range(0, nq, block):
        q = queries[q0:q0 + block]
        ip = q @ base.T
        if metric == "l2":
            d = np.einsum("ij,ij->i", q, q)[:, None] + base_sq[None, :] - 2.0 * ip
            np.maximum(d, 0.0, out=d)
        elif metric == "mips":
            d = -ip
        elif metric == "cosine":
            d = 1.0 - ip
        else:
            raise ValueError(f"unknown metric {metric!r}")
        if kk < n:
            # Candidates: everything at or below the kk-th distance, so that
            # ties at the boundary are resolved by id below.
            part = np.partition(d, kk - 1, axis=1)[:, kk - 1:kk]
        for r in range(d.shape[0]):
            row = d[r]
            cand = np.arange(n) if kk == n else np.flatnonzero(row <= part[r, 0])
            order = np.lexsort((cand, row[cand]))[:kk]
            sel = cand[order]
            out_ids[q0 + r, :kk] = sel
            out_d[q0 + r, :kk] = row[sel]
    return out_ids, out_d


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dist_fn", required=True, choices=["l2", "mips", "cosine"])
    p.add_argument("--data_type", required=True, choices=sorted(_DTYPES))
    p.add_argument("--K", type=int, required=True)
    p.add_argument("--query_file", required=True)
    p.add_argument("--base_file", required=True)
    p.add_argument("--gt_file", required=True)
    p.add_argument("--tags_file")
    a = p.parse_args(argv)

    dtype = _DTYPES[a.data_type]
    base = read_bin(a.base_file, dtype)
    queries = read_bin(a.query_file, dtype)
    if base.shape[1] != queries.shape[1]:
        raise SystemExit(f"dimension mismatch: base {base.shape[1]}, queries {queries.shape[1]}")
    rows, dists = exact_knn(base, queries, a.K, a.dist_fn)

    if a.tags_file:
        tags = read_bin(a.tags_file, np.uint32).reshape(-1)
        if tags.size != base.shape[0]:
            raise SystemExit(f"{a.tags_file}: {tags.size} tags for {base.shape[0]} points")
        ids = np.where(rows >= 0, tags[np.maximum(rows, 0)].astype(np.int64), PAD_ID)
    else:
        ids = np.where(rows >= 0, rows, PAD_ID)
    write_gt(a.gt_file, ids.astype(np.uint32), dists)
    print(f"compute_gt.py: {queries.shape[0]} queries x {base.shape[0]} points, "
          f"K={a.K}, {a.dist_fn} -> {a.gt_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
