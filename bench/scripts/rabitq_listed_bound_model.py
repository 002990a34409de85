#!/usr/bin/env python3
"""How many listed rows an exact IVF restricted scan must read, by RAM code width.

A model (numpy, not the engine) of the exact-scan fallback of filtered IVF
search (src/search/ivf_restricted.cc): each listed row's RAM code gives a
RaBitQ estimate of its distance and a lower bound (Gao and Long, "RaBitQ",
SIGMOD 2024: error sqrt(1 - <obar,o>^2) / <obar,o> * eps0 / sqrt(D - 1),
widened x2 as the engine does for exactness); a row must be read from SSD
when its lower bound is below the true k-th distance among the listed rows.
The engine keeps 1-bit codes in RAM; this counts the reads a B-bit RAM code
(B = 1..4, uniform per-dimension grid, scale chosen per vector to maximise
<obar,o>, as extended RaBitQ does) would need.

usage: /usr/bin/python3 rabitq_listed_bound_model.py BASE.fbin QUERIES.fbin [ROWS] [LISTED] [QUERIES]
"""
import sys

import numpy as np


def read_fbin(path, rows):
    with open(path, "rb") as f:
        _, dim = np.fromfile(f, dtype=np.int32, count=2)
        return np.fromfile(f, dtype=np.float32, count=rows * dim).reshape(rows, dim).astype(np.float64)


def code(rotated, bits, dim):
    """Unit-norm B-bit reconstruction of each row of `rotated` (unit rows)."""
    if bits == 1:
        return np.sign(rotated) / np.sqrt(dim)
    levels = 2 ** bits
    best = np.zeros_like(rotated)
    best_cos = np.full(len(rotated), -1.0)
    for t in np.linspace(0.5, 4.0, 36):
        step = t / np.sqrt(dim)
        k = np.clip(np.floor(rotated / step + levels / 2), 0, levels - 1)
        rec = k + 0.5 - levels / 2
        rec /= np.linalg.norm(rec, axis=1, keepdims=True)
        cos = (rec * rotated).sum(1)
        better = cos > best_cos
        best[better] = rec[better]
        best_cos[better] = cos[better]
    return best


def main():
    base_path, query_path = sys.argv[1], sys.argv[2]
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 200000
    listed_n = int(sys.argv[4]) if len(sys.argv) > 4 else 954
    queries_n = int(sys.argv[5]) if len(sys.argv) > 5 else 60
    rng = np.random.default_rng(1)
    x = read_fbin(base_path, rows)
    queries = read_fbin(query_path, queries_n)
    dim = x.shape[1]
    clusters = max(1, rows // 1000)
    cent = x[rng.choice(rows, clusters, replace=False)]
    norms = (x ** 2).sum(1)[:, None]
    for _ in range(6):  # Lloyd
        assign = (norms - 2 * x @ cent.T + (cent ** 2).sum(1)[None]).argmin(1)
        for c in range(clusters):
            members = assign == c
            if members.any():
                cent[c] = x[members].mean(0)
    assign = (norms - 2 * x @ cent.T + (cent ** 2).sum(1)[None]).argmin(1)
    rotation, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    residual = x - cent[assign]
    residual_norm = np.linalg.norm(residual, axis=1)
    rotated = (residual / residual_norm[:, None]) @ rotation.T
    eps0, widen, k = 1.9, 2.0, 10
    codes = {b: code(rotated, b, dim) for b in (1, 2, 3, 4)}
    cosines = {b: (codes[b] * rotated).sum(1) for b in codes}
    reads = {b: [] for b in codes}
    misses = {b: 0 for b in codes}
    for q in queries:
        listed = rng.choice(rows, listed_n, replace=False)
        true = ((x[listed] - q) ** 2).sum(1)
        dk = np.sort(true)[k - 1]
        qr = q - cent[assign[listed]]
        qr_norm = np.linalg.norm(qr, axis=1)
        q_rot = (qr / qr_norm[:, None]) @ rotation.T
        for b in codes:
            cos = cosines[b][listed]
            ip = (codes[b][listed] * q_rot).sum(1) / cos
            err = np.sqrt(np.maximum(1 - cos ** 2, 0)) / cos * eps0 / np.sqrt(dim - 1) * widen
            est = residual_norm[listed] ** 2 + qr_norm ** 2 - 2 * residual_norm[listed] * qr_norm * ip
            lower = est - 2 * residual_norm[listed] * qr_norm * err
            reads[b].append(int((lower < dk).sum()))
            misses[b] += int((lower[true <= dk] > dk).sum())
    print(f"rows {rows}, clusters {clusters}, listed {listed_n}, queries {queries_n}, eps0 {eps0} x{widen}")
    for b in codes:
        extra = 0 if b == 1 else (b - 1) * dim // 8 + 4
        print(f"B {b}: mean <obar,o> {cosines[b].mean():.4f}, rows to read {np.mean(reads[b]):.1f}, "
              f"true top-{k} rows bounded out {misses[b]} of {k * queries_n}, "
              f"RAM beyond the 1-bit code {extra} B/vector")


if __name__ == "__main__":
    main()
