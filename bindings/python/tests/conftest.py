"""Shared helpers of the strata Python tests: data, exact search in numpy, recall."""

import numpy as np
import pytest

import strata


def brute_force(base, queries, k, metric="l2"):
    """Exact k nearest rows of `base` for each query (ids, distances), in float64,
    with strata's distances: squared L2, -<q, x>, 1 - cos."""
    base = np.asarray(base, dtype=np.float64)
    queries = np.atleast_2d(np.asarray(queries, dtype=np.float64))
    if metric == "l2":
        d = (queries**2).sum(1)[:, None] - 2 * queries @ base.T + (base**2).sum(1)[None, :]
    elif metric == "ip":
        d = -(queries @ base.T)
    elif metric == "cosine":
        qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
        bn = base / np.linalg.norm(base, axis=1, keepdims=True)
        d = 1 - qn @ bn.T
    else:
        raise ValueError(metric)
    order = np.argsort(d, axis=1, kind="stable")[:, :k]
    return order, np.take_along_axis(d, order, axis=1)


def recall(found, truth):
    """Mean fraction of each row of `truth` present in the same row of `found`."""
    hits = [len(set(f.tolist()) & set(t.tolist())) for f, t in zip(found, truth)]
    return sum(hits) / truth.size


def clustered(rng, n, dim, clusters=20, spread=0.3):
    """Clustered float32 data (closer to embeddings than uniform noise)."""
    centres = rng.normal(size=(clusters, dim))
    labels = rng.integers(0, clusters, size=n)
    return (centres[labels] + spread * rng.normal(size=(n, dim))).astype(np.float32)


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture
def coll_path(tmp_path):
    return str(tmp_path / "coll")


@pytest.fixture
def small_collection(coll_path, rng):
    """A flat-phase collection of 200 x 16 vectors with ids 0..199, and its data."""
    data = rng.normal(size=(200, 16)).astype(np.float32)
    col = strata.Collection(coll_path, dim=16)
    col.add(data)
    yield col, data
    col.close()
