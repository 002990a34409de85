"""ann-benchmarks algorithm module for Strata (SSD-resident graph and IVF).

Laid into a copy of the harness as ann_benchmarks/algorithms/strata/module.py
by bench/harness/annb/run_harness.py (the harness itself is not part of this
repository). Needs `import strata` (PYTHONPATH=<build>/python).

Two constructors, one per static index type:

  StrataGraph(metric, build)   build: strata build parameters for --type graph
                               (R, L, alpha, pq_bytes, ...); query args:
                               L [, beamwidth]
  StrataIVF(metric, build)     build: parameters for --type ivf (clusters,
                               bits, ...); query args: nprobe

metric: ann-benchmarks' "euclidean" -> strata "l2", "angular" -> "cosine".

Index files live in a fresh directory under $STRATA_ANNB_INDEX_DIR (default:
the system temp dir). Strata reads with O_DIRECT, so that directory must be
on a real file system (ext4/xfs), not tmpfs; fit() refuses tmpfs.

The index is built in a child interpreter (python -c 'strata.build_index')
from a .fbin file written by fit(), then opened in this process. The
harness's build_time therefore covers writing the file, the child's start
and the build; its index_size (RSS after fit minus RSS before) is the memory
the opened index really holds in this process (PQ codes / RaBitQ factors,
the in-RAM entry graph, caches), not the builder's transient peak, which
get_additional() reports separately with the index's bytes on disk.

Single-query mode (query) searches with threads=1. Batch mode (batch_query)
hands all queries to one Index.search call with threads = the CPU count (or
$STRATA_ANNB_BATCH_THREADS), as faiss does with OpenMP.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

import strata

from ..base.module import BaseANN

_METRICS = {"euclidean": "l2", "angular": "cosine"}


def _check_not_tmpfs(path):
    """O_DIRECT fails on tmpfs; say so before the builder does."""
    try:
        best, fstype = "", ""
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3:
                    mnt = parts[1]
                    real = os.path.realpath(path)
                    if (real == mnt or real.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= len(best):
                        best, fstype = mnt, parts[2]
        if fstype in ("tmpfs", "ramfs"):
            raise RuntimeError(
                f"strata index dir {path} is on {fstype}; strata needs O_DIRECT: "
                "set STRATA_ANNB_INDEX_DIR to a directory on a disk file system"
            )
    except OSError:
        pass


class _Strata(BaseANN):
    index_type = None  # "graph" | "ivf"

    def __init__(self, metric, build=None):
        if metric not in _METRICS:
            raise ValueError(f"strata: unsupported metric {metric!r} (euclidean, angular)")
        self._ann_metric = metric
        self._metric = _METRICS[metric]
        self._build = dict(build or {})
        self._query = {}
        self._index = None
        self._dir = None
        self._report = {}
        self._n = 0
        self._batch_threads = int(os.environ.get("STRATA_ANNB_BATCH_THREADS", "0")) or os.cpu_count() or 1

    # -- build --------------------------------------------------------------
    def fit(self, X):
        X = np.ascontiguousarray(X, dtype=np.float32)
        self._n = len(X)
        parent = os.environ.get("STRATA_ANNB_INDEX_DIR") or tempfile.gettempdir()
        os.makedirs(parent, exist_ok=True)
        _check_not_tmpfs(parent)
        self._dir = tempfile.mkdtemp(prefix=f"strata-{self.index_type}-", dir=parent)
        base = os.path.join(self._dir, "base.fbin")
        with open(base, "wb") as f:
            np.array(X.shape, dtype=np.uint32).tofile(f)
            X.tofile(f)
        path = os.path.join(self._dir, "index")
        code = (
            "import json, sys, strata\n"
            "a = json.loads(sys.argv[1])\n"
            "r = strata.build_index(a['base'], a['path'], type=a['type'], metric=a['metric'], **a['params'])\n"
            "print('STRATA_REPORT ' + json.dumps(r, default=str))\n"
        )
        arg = json.dumps({"base": base, "path": path, "type": self.index_type,
                          "metric": self._metric, "params": self._build})
        proc = subprocess.run([sys.executable, "-c", code, arg], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        if proc.returncode != 0:
            raise RuntimeError(f"strata build failed (rc {proc.returncode}): {proc.stderr.strip()[-2000:]}")
        for line in proc.stdout.splitlines():
            if line.startswith("STRATA_REPORT "):
                self._report = json.loads(line[len("STRATA_REPORT "):])
        os.remove(base)  # the index holds its own copy of the vectors
        self._index = strata.Index.open(path)
        if len(self._index) != self._n:
            raise RuntimeError(f"strata index holds {len(self._index)} vectors, expected {self._n}")

    # -- search -------------------------------------------------------------
    def _valid(self, ids_row):
        return ids_row[ids_row != strata.NO_ID].astype(np.int64)

    def query(self, v, n):
        ids, _ = self._index.search(v, k=n, threads=1, **self._query)
        return self._valid(ids[0])

    def batch_query(self, X, n):
        ids, _ = self._index.search(X, k=n, threads=self._batch_threads, **self._query)
        self._res = [self._valid(row) for row in ids]

    def get_batch_results(self):
        return self._res

    # -- bookkeeping --------------------------------------------------------
    def get_additional(self):
        out = {"index_type": self.index_type}
        if self._index is not None:
            out["strata_memory_bytes"] = int(self._index.memory_bytes)
            out["strata_disk_bytes"] = int(self._index.disk_bytes)
        for key in ("seconds_total", "peak_rss_bytes", "index_bytes"):
            if key in self._report:
                out["build_" + key] = self._report[key]
        return out

    def done(self):
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._dir and os.environ.get("STRATA_ANNB_KEEP_INDEX") != "1":
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def _params_str(self):
        return ", ".join(f"{k}={v}" for k, v in sorted(self._build.items()))

    def __str__(self):
        q = ", ".join(f"{k}={v}" for k, v in self._query.items())
        return f"Strata{self.index_type.capitalize()}({self._params_str()}; {q})"


class StrataGraph(_Strata):
    """Strata's SSD graph (Vamana + PQ in RAM, full vectors on SSD)."""

    index_type = "graph"

    def set_query_arguments(self, L, beamwidth=None):
        self._query = {"L": int(L)}
        if beamwidth is not None:
            self._query["beamwidth"] = int(beamwidth)


class StrataIVF(_Strata):
    """Strata's SSD IVF (RaBitQ codes in RAM, records on SSD)."""

    index_type = "ivf"

    def set_query_arguments(self, nprobe):
        self._query = {"nprobe": int(nprobe)}
