"""strata.build_index and strata.Index: builds from arrays and files, searches
against numpy, parameters and errors."""

import os
import subprocess

import numpy as np
import pytest
from conftest import brute_force, clustered, recall

import strata

N, DIM = 2000, 24


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    return clustered(rng, N, DIM), clustered(rng, 50, DIM)


@pytest.fixture(scope="module")
def graph_index(tmp_path_factory, data):
    base, _ = data
    path = str(tmp_path_factory.mktemp("graph") / "idx")
    report = strata.build_index(base, path, type="graph", metric="l2", R=32, L=64, threads=1)
    return path, report


def test_graph_build_report_and_properties(graph_index):
    path, report = graph_index
    assert report["type"] == "graph" and report["num_vectors"] == N and report["dim"] == DIM
    assert report["seconds_total"] > 0 and report["path"] == path
    assert not [f for f in os.listdir(os.path.dirname(path)) if ".input-" in f]  # temp removed
    with strata.Index.open(path) as index:
        assert (index.type, index.dim, index.metric, len(index)) == ("graph", DIM, "l2", N)
        assert index.element_type == "float32"
        assert index.memory_bytes > 0 and index.disk_bytes > 0
        assert "graph" in index.describe() and "graph" in repr(index)
    assert index.closed
    with pytest.raises(ValueError, match="closed"):
        index.search(np.zeros(DIM, np.float32))


def test_graph_search_recall_and_shapes(graph_index, data):
    path, _ = graph_index
    _, queries = data
    base, _ = data
    want, _ = brute_force(base, queries, 10)
    with strata.Index.open(path, cache_nodes=100) as index:
        ids, dists = index.search(queries, k=10, L=100, beamwidth=4, threads=1)
        assert ids.shape == dists.shape == (50, 10)
        assert ids.dtype == np.uint64 and dists.dtype == np.float32
        assert recall(ids, want) >= 0.9
        assert (np.diff(dists, axis=1) >= 0).all()
        two = index.search(queries, k=10, L=100, beamwidth=4, threads=2)
        np.testing.assert_array_equal(ids, two[0])
        one_ids, one_dists = index.search(queries[3], k=10, L=100, beamwidth=4)
        assert one_ids.shape == (1, 10)
        np.testing.assert_array_equal(one_ids[0], ids[3])
        np.testing.assert_array_equal(index.search(queries.astype(np.float64), k=10, L=100)[0],
                                      index.search(queries, k=10, L=100)[0])
        base_ids, _ = index.search(queries, k=10, L=20, profile="baseline", memgraph=True)
        assert recall(base_ids, want) > 0.5


def test_ivf_from_npy_file(tmp_path, data):
    base, queries = data
    np.save(tmp_path / "base.npy", base)
    path = tmp_path / "ivf"
    report = strata.build_index(str(tmp_path / "base.npy"), path, type="ivf", clusters=4,
                                threads=1)
    assert report["type"] == "ivf" and report["clusters"] == 4 and report["num_vectors"] == N
    with strata.Index.open(path) as index:
        assert index.type == "ivf"
        ids, dists = index.search(queries, k=10, nprobe=4)
        assert ids.shape == (50, 10)
        want, _ = brute_force(base, queries, 10)
        assert recall(ids, want) >= 0.9
        few, _ = index.search(queries, k=10, nprobe=1, pipeline="scheduled", inflight=4)
        assert few.shape == (50, 10)


def test_build_from_uint8_array(tmp_path, rng):
    base = rng.integers(0, 255, size=(600, 16), dtype=np.uint8)
    strata.build_index(base, tmp_path / "u8", type="ivf", clusters=2, threads=1)
    with strata.Index.open(tmp_path / "u8") as index:
        ids, _ = index.search(base[:5], k=1, nprobe=2)  # uint8 queries are converted
        np.testing.assert_array_equal(ids[:, 0], np.arange(5))


def test_build_errors(tmp_path, data):
    base, _ = data
    with pytest.raises(ValueError, match="'clusters'"):  # an IVF parameter
        strata.build_index(base, tmp_path / "g", type="graph", clusters=4)
    with pytest.raises(ValueError, match="'R'"):  # a graph parameter
        strata.build_index(base, tmp_path / "g", type="ivf", R=4)
    with pytest.raises(ValueError, match="'bogus'"):
        strata.build_index(base, tmp_path / "g", bogus=1)
    with pytest.raises(ValueError, match="hnsw"):
        strata.build_index(base, tmp_path / "g", type="hnsw")
    with pytest.raises(ValueError, match="metric"):
        strata.build_index(base, tmp_path / "g", metric="manhattan")
    with pytest.raises(ValueError, match="2-D"):
        strata.build_index(base[0], tmp_path / "g")
    bad = base[:300].copy()
    bad[17, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        strata.build_index(bad, tmp_path / "nan", type="ivf", threads=1)
    assert not [f for f in os.listdir(tmp_path) if ".input-" in f]  # temp removed on failure
    with pytest.raises(FileNotFoundError):
        strata.build_index(str(tmp_path / "missing.fbin"), tmp_path / "g")


def test_open_and_search_errors(tmp_path, graph_index):
    path, _ = graph_index
    with pytest.raises(FileNotFoundError):
        strata.Index.open(tmp_path / "nothing")
    with pytest.raises(ValueError, match="'bogus'"):
        strata.Index.open(path, bogus=True)
    with pytest.raises(ValueError, match="cache policy"):
        strata.Index.open(path, cache_policy="lru")
    with strata.Index.open(path) as index:
        with pytest.raises(ValueError, match="'nprobes'"):
            index.search(np.zeros(DIM), nprobes=3)
        with pytest.raises(ValueError, match="dimension 5"):
            index.search(np.zeros(5))


def test_corrupt_index_raises_corruption_error(tmp_path, data):
    base, _ = data
    path = tmp_path / "c"
    strata.build_index(base[:500], path, type="ivf", clusters=1, threads=1)
    with open(path / "manifest.json", "r+b") as f:
        f.write(b"#garbage#")
    with pytest.raises(strata.CorruptionError, match="manifest"):
        strata.Index.open(path)
    assert issubclass(strata.CorruptionError, RuntimeError)


@pytest.mark.skipif(not os.environ.get("STRATA_CLI"), reason="STRATA_CLI (the strata binary) not set")
def test_results_equal_the_cli(tmp_path, graph_index, data):
    """The same index and queries through `strata search` give the same ids."""
    path, _ = graph_index
    _, queries = data
    qfile = tmp_path / "q.fbin"
    with open(qfile, "wb") as f:
        np.array(queries.shape, np.uint32).tofile(f)
        queries.tofile(f)
    out = tmp_path / "r.ibin"
    subprocess.run([os.environ["STRATA_CLI"], "search", "--index", path, "--queries", str(qfile),
                    "--out", str(out), "--k", "10", "--L", "60", "--threads", "1"],
                   check=True, capture_output=True)
    raw = np.fromfile(out, np.uint32)
    nq, k = raw[:2]
    cli_ids = raw[2:2 + nq * k].reshape(nq, k)
    with strata.Index.open(path) as index:
        ids, _ = index.search(queries, k=10, L=60, threads=1)
    np.testing.assert_array_equal(ids.astype(np.uint32), cli_ids)
