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
cosine, computed in float64 for the candidates a float32 pass picks
(exact_knn); equal distances are ordered by id. When fewer
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


def _distances(q, base, base_sq, metric):
    ip = q @ base.T
    if metric == "l2":
        d = np.einsum("ij,ij->i", q, q)[:, None] + base_sq[None, :] - 2 * ip
        np.maximum(d, 0, out=d)
        return d
    if metric == "mips":
        return -ip
    if metric == "cosine":
        return 1 - ip
    raise ValueError(f"unknown metric {metric!r}")


def exact_knn(base, queries, k, metric="l2", block=64, margin=None):
    """Exact top-k of every query over base rows: (ids int64, dists float64),
    shape (nq, k), row ids 0..n-1, padded with -1 / +inf past n.

    Two passes per block of queries: float32 distances to every row pick the
    k + margin nearest candidates (default margin max(k, 32)), whose distances
    are then recomputed in float64 and sorted (ties by id). A true neighbour is
    missed only if float32 rounding moves it behind more than `margin` rows,
    far beyond float32's relative error at these magnitudes.
    """
    base = np.asarray(base)
    queries = np.asarray(queries)
    n, nq = base.shape[0], queries.shape[0]
    b32 = np.ascontiguousarray(base, dtype=np.float32)
    q32 = np.ascontiguousarray(queries, dtype=np.float32)
    if metric == "cosine":
        b32 = b32 / np.maximum(np.linalg.norm(b32, axis=1, keepdims=True), 1e-30)
        q32 = q32 / np.maximum(np.linalg.norm(q32, axis=1, keepdims=True), 1e-30)
    b64 = b32.astype(np.float64) if metric == "cosine" else np.asarray(base, dtype=np.float64)
    q64 = q32.astype(np.float64) if metric == "cosine" else np.asarray(queries, dtype=np.float64)
    bsq32 = np.einsum("ij,ij->i", b32, b32)
    kk = min(k, n)
    out_ids = np.full((nq, k), -1, dtype=np.int64)
    out_d = np.full((nq, k), np.inf, dtype=np.float64)
    if kk == 0:
        return out_ids, out_d
    m = min(n, kk + (max(k, 32) if margin is None else margin))
    block = max(1, min(block, (64 << 20) // max(n, 1)))
    for q0 in range(0, nq, block):
        d32 = _distances(q32[q0:q0 + block], b32, bsq32, metric)
        cand = (np.argpartition(d32, m - 1, axis=1)[:, :m] if m < n
                else np.broadcast_to(np.arange(n), d32.shape))
        for r in range(d32.shape[0]):
            c = np.asarray(cand[r])
            qv = q64[q0 + r]
            x = b64[c]
            if metric == "l2":
                diff = x - qv
                dist = np.einsum("ij,ij->i", diff, diff)
            elif metric == "mips":
                dist = -(x @ qv)
            else:
                dist = 1 - (x @ qv)
            order = np.lexsort((c, dist))[:kk]
            out_ids[q0 + r, :kk] = c[order]
            out_d[q0 + r, :kk] = dist[order]
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
