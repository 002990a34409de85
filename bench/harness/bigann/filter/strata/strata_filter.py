"""big-ann-benchmarks NeurIPS'23 filter-track algorithm over strata.Collection.

bench/harness/bigann/run_harness.py lays this file into a copy of the harness
as neurips23/filter/strata/strata_filter.py (with config.yaml beside it); the
harness's FilterRunner (neurips23/filter/run.py) then calls

    fit(dataset)                       base vectors + their labels (.spmat CSR)
    filtered_query(X, filter, k)       filter: CSR, one row of labels per query;
                                       X[i]'s k nearest among the points that
                                       carry ALL of row i's labels
    get_results()                      self.res: (nq, k) int32, -1 past the hits

The static index (strata.Index) takes no per-query labels from Python, so the
points go into a strata.Collection with labels= (stored as the payload field
"labels"), and each query's label set becomes a Qdrant-style filter with one
"must" condition per label -- a conjunction, as the track asks:

    {"must": [{"key": "labels", "match": {"value": 3}},
              {"key": "labels", "match": {"value": 4}}]}

The field "labels" is declared in the collection's payload index, so the
filter is decided in RAM inside the search (the graph walk or the IVF scan
skips candidates that fail it), and a selective one is answered from the
points that pass alone (exact_scan_limit). Collection.search takes one filter for a
batch, so queries are grouped by identical label sets and each group is
searched as one batch (random-filter-s has two sets; YFCC's 100K queries have
many, so a group may hold one query). A query without labels is searched
unfiltered.

Constructor arguments (config.yaml): StrataFilter(metric, index_params) with
index_params

    index        "graph" (default) or "ivf"
    batch        rows per Collection.add call (default 1,000,000)
    dir          where to put the collection (default a fresh directory under
                 $STRATA_BIGANN_INDEX_DIR or data/indices/filter/strata/;
                 removed by done())
    anything else  strata.Collection options under the C++ CollectionOptions
                 names (graph={R, L, ...}, ivf={clusters, ...}, open={...}, ...)

Query arguments: a dict passed to Collection.search as keywords (L,
beamwidth, nprobe, threads, ...).
"""

import json
import os
import shutil
import tempfile
import time

import numpy as np

import strata
from benchmark.datasets import DATASETS
from neurips23.filter.base import BaseFilterANN

_METRICS = {"euclidean": "l2", "ip": "ip", "angular": "cosine", "cosine": "cosine", "l2": "l2"}
_ELEMENT_TYPES = {"float32": None, "uint8": "uint8", "int8": "int8"}
_ADAPTER_KEYS = ("index", "batch", "dir")


def _compact(d):
    return json.dumps(d, sort_keys=True, separators=(",", ":"))


def label_filter(labels):
    """The conjunction of `labels` (ints) as a Collection.search filter."""
    return {"must": [{"key": "labels", "match": {"value": int(v)}} for v in labels]}


def csr_rows(m):
    """Per row of a scipy CSR matrix, its column indices (the labels)."""
    m = m.tocsr()
    return [m.indices[m.indptr[i]:m.indptr[i + 1]] for i in range(m.shape[0])]


class StrataFilter(BaseFilterANN):
    def __init__(self, metric, index_params=None):
        index_params = dict(index_params or {})
        if metric not in _METRICS:
            raise ValueError(f"strata: unsupported metric {metric!r}")
        self._metric = _METRICS[metric]
        self._index_type = index_params.get("index", "graph")
        self._batch = int(index_params.get("batch", 1 << 20))
        self._dir_param = index_params.get("dir")
        self._options = {k: v for k, v in index_params.items() if k not in _ADAPTER_KEYS}
        self._query_args = {}
        self._col = None
        self._dir = None
        self._fit_seconds = None
        self._groups = 0
        self.name = "strata"

    def fit(self, dataset):
        ds = DATASETS[dataset]()
        if ds.dtype not in _ELEMENT_TYPES:
            raise ValueError(f"strata: unsupported dtype {ds.dtype!r}")
        t0 = time.perf_counter()
        X = ds.get_dataset()
        labels = csr_rows(ds.get_dataset_metadata())
        if len(labels) != X.shape[0]:
            raise ValueError(f"strata: {len(labels)} label rows for {X.shape[0]} points")
        self._open(X.shape[1], ds.dtype)
        for s in range(0, X.shape[0], self._batch):
            e = min(X.shape[0], s + self._batch)
            self._col.add(np.ascontiguousarray(X[s:e], dtype=np.float32),
                          ids=np.arange(s, e, dtype=np.uint64), labels=labels[s:e])
        self._col.wait_for_merge()
        self._fit_seconds = time.perf_counter() - t0
        print(f"strata {strata.__version__}: {X.shape[0]} points with labels in {self._fit_seconds:.1f} s; "
              f"{self._col.stats().get('index_description', '')}")

    def load_index(self, dataset):
        return False

    def index_files_to_store(self, dataset):
        raise NotImplementedError

    def query(self, X, k):
        ids, _ = self._col.search(X, k=k, **self._query_args)
        self.res = self._to_res(ids)

    def filtered_query(self, X, filter, k):
        X = np.ascontiguousarray(X, dtype=np.float32)
        rows = csr_rows(filter)
        if len(rows) != X.shape[0]:
            raise ValueError(f"strata: {len(rows)} filter rows for {X.shape[0]} queries")
        groups = {}
        for i, r in enumerate(rows):
            groups.setdefault(tuple(sorted(set(int(v) for v in r))), []).append(i)
        res = np.full((X.shape[0], k), -1, dtype=np.int32)
        for key, members in groups.items():
            idx = np.asarray(members, dtype=np.int64)
            flt = label_filter(key) if key else None
            ids, _ = self._col.search(X[idx], k=k, filter=flt, **self._query_args)
            res[idx] = self._to_res(ids)
        self._groups = len(groups)
        self.res = res

    def set_query_arguments(self, query_args):
        self._query_args = dict(query_args or {})

    def get_additional(self):
        out = {"strata_filter_groups": self._groups}
        if self._fit_seconds is not None:
            out["strata_fit_seconds"] = self._fit_seconds
        if self._col is not None:
            stats = self._col.stats()
            for key in ("live", "indexed", "ram_bytes", "disk_bytes", "first_build_seconds"):
                if isinstance(stats.get(key), (int, float)):
                    out["strata_" + key] = stats[key]
        return out

    def done(self):
        if self._col is not None:
            self._col.close()
            self._col = None
        if self._dir:
            target = self._dir if self._dir_param else os.path.dirname(self._dir)
            shutil.rmtree(target, ignore_errors=True)
            self._dir = None

    def __str__(self):
        return f"strata({self._index_type},{_compact(self._options)},{_compact(self._query_args)})"

    @staticmethod
    def _to_res(ids):
        missing = ids == strata.NO_ID
        res = ids.astype(np.int64)
        res[missing] = -1
        return res.astype(np.int32)

    def _open(self, dim, dtype):
        if self._dir_param:
            self._dir = self._dir_param
            if os.path.exists(self._dir):
                shutil.rmtree(self._dir)
        else:
            root = os.environ.get("STRATA_BIGANN_INDEX_DIR") or os.path.join(
                os.getcwd(), "data", "indices", "filter", "strata")
            os.makedirs(root, exist_ok=True)
            self._dir = os.path.join(tempfile.mkdtemp(prefix="filter-", dir=root), "collection")
        options = dict(self._options)
        if _ELEMENT_TYPES[dtype] and "element_type" not in options:
            options["element_type"] = _ELEMENT_TYPES[dtype]
        # The labels in RAM (a payload index): filters decided without
        # reading payloads, and selective ones answered from the matching
        # points alone (the collection's exact-scan fallback).
        options.setdefault("payload_index", {"labels": "integer"})
        self._col = strata.Collection(self._dir, dim=dim, metric=self._metric,
                                      index=self._index_type, **options)
