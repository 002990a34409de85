"""strata.Collection: every call, its results against numpy, and its lifecycle."""

import json
import threading
import time

import numpy as np
import pytest
from conftest import brute_force, clustered, recall

import strata


def test_add_get_delete_len(small_collection):
    col, data = small_collection
    assert len(col) == 200
    vectors, payloads = col.get([3, 7])
    np.testing.assert_array_equal(vectors, data[[3, 7]])
    assert payloads == [b"", b""]
    assert 7 in col and 3 in col and 1000 not in col
    assert col.delete([3, 1000]) == 1
    assert len(col) == 199
    vectors, payloads = col.get(3)
    assert vectors.shape == (1, 16) and np.isnan(vectors).all()
    assert payloads == [None]
    assert 3 not in col
    ids, _ = col.search(data[3], k=5)
    assert 3 not in ids


def test_default_ids_continue_after_largest(coll_path, rng):
    x = rng.normal(size=(7, 4)).astype(np.float32)
    with strata.Collection(coll_path, dim=4) as col:
        np.testing.assert_array_equal(col.add(x[:3]), [0, 1, 2])
        ids = col.add(x[3:5], ids=[10, 11])
        assert ids.dtype == np.uint64
        np.testing.assert_array_equal(ids, [10, 11])
        np.testing.assert_array_equal(col.add(x[5:7]), [12, 13])
        np.testing.assert_array_equal(col.add(x[0]), [14])  # one vector of shape (dim,)
        assert len(col) == 8


def test_upsert_replaces(small_collection):
    col, data = small_collection
    new = np.full(16, 0.5, dtype=np.float32)
    col.add(new, ids=[5])
    assert len(col) == 200
    np.testing.assert_array_equal(col.get(5)[0][0], new)


def test_payloads(coll_path, rng):
    x = rng.normal(size=(6, 4)).astype(np.float32)
    with strata.Collection(coll_path, dim=4, max_payload_bytes=64) as col:
        col.add(x, payloads=[b"raw\x00bytes", "héllo", {"a": 1, "b": [1, 2]}, [1, "x"], None,
                             bytearray(b"ba")])
        _, payloads = col.get(range(6))
        assert payloads[0] == b"raw\x00bytes"
        assert payloads[1] == "héllo".encode()
        assert json.loads(payloads[2]) == {"a": 1, "b": [1, 2]}
        assert payloads[2] == b'{"a":1,"b":[1,2]}'
        assert json.loads(payloads[3]) == [1, "x"]
        assert payloads[4] == b""
        assert payloads[5] == b"ba"
        with pytest.raises(TypeError, match="payload 0"):
            col.add(x[:1], payloads=[3])
        with pytest.raises(TypeError, match="list with one payload per vector"):
            col.add(x[:1], payloads="just a str")
        with pytest.raises(ValueError, match="2 entries for 1 vectors"):
            col.add(x[:1], payloads=[b"a", b"b"])
        with pytest.raises(ValueError, match="payload"):
            col.add(x[:1], payloads=[b"x" * 65])


@pytest.mark.parametrize("metric", ["l2", "ip", "cosine"])
def test_flat_search_is_exact(coll_path, rng, metric):
    data = rng.normal(size=(500, 16)).astype(np.float32)
    queries = rng.normal(size=(20, 16)).astype(np.float32)
    with strata.Collection(coll_path, dim=16, metric=metric) as col:
        col.add(data)
        assert col.stats()["index_version"] == 0  # below the threshold: exact scan
        ids, dists = col.search(queries, k=10)
    want_ids, want_dists = brute_force(data, queries, 10, metric)
    assert ids.shape == (20, 10) and ids.dtype == np.uint64
    assert dists.shape == (20, 10) and dists.dtype == np.float32
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(dists, want_dists, rtol=1e-4, atol=1e-4)


def test_search_pads_with_no_id(coll_path, rng):
    assert strata.NO_ID == 2**64 - 1
    data = rng.normal(size=(5, 8)).astype(np.float32)
    with strata.Collection(coll_path, dim=8) as col:
        col.add(data, ids=[10, 20, 30, 40, 50])
        ids, dists = col.search(data[:2], k=8)
    assert ids.shape == (2, 8)
    assert (ids[:, 5:] == strata.NO_ID).all() and np.isinf(dists[:, 5:]).all()
    assert sorted(ids[0, :5].tolist()) == [10, 20, 30, 40, 50]
    assert ids[0, 0] == 10 and ids[1, 0] == 20 and dists[0, 0] == 0
    assert (np.diff(dists[:, :5], axis=1) >= 0).all()


def test_single_query_and_threads(small_collection, rng):
    col, data = small_collection
    q = rng.normal(size=16).astype(np.float32)
    ids, dists = col.search(q, k=3)
    assert ids.shape == (1, 3) and dists.shape == (1, 3)
    queries = rng.normal(size=(30, 16)).astype(np.float32)
    one = col.search(queries, k=5, threads=1)
    two = col.search(queries, k=5, threads=2)
    np.testing.assert_array_equal(one[0], two[0])
    empty_ids, empty_dists = col.search(np.zeros((0, 16), np.float32), k=4)
    assert empty_ids.shape == (0, 4) and empty_dists.shape == (0, 4)


@pytest.mark.parametrize("index", ["graph", "ivf"])
def test_trained_index_high_recall(coll_path, rng, index):
    # The add that crosses 1,024 live vectors (the default flat_threshold)
    # trains and builds the first SSD index before it returns.
    data = clustered(rng, 1400, 24)
    queries = clustered(rng, 40, 24)
    with strata.Collection(coll_path, dim=24, index=index, background_merge=False) as col:
        col.add(data[:1000])
        assert col.stats()["index_version"] == 0
        col.add(data[1000:])
        stats = col.stats()
        assert stats["index_version"] >= 1 and stats["index_type"] == index
        assert stats["indexed"] == 1400 and stats["live"] == 1400
        ids, dists = col.search(queries, k=10, L=100, nprobe=8)
    want, _ = brute_force(data, queries, 10)
    assert recall(ids, want) >= 0.9
    # Distances are exact distances of the returned ids, nearest first.
    exact = ((data[ids.astype(np.int64)] - queries[:, None, :]) ** 2).sum(-1)
    np.testing.assert_allclose(dists, exact, rtol=1e-3, atol=1e-3)
    assert (np.diff(dists, axis=1) >= 0).all()


def test_reopen_keeps_data(coll_path, rng):
    data = rng.normal(size=(300, 8)).astype(np.float32)
    col = strata.Collection(coll_path, dim=8, metric="cosine")
    col.add(data, payloads=[f"p{i}" for i in range(300)])
    col.delete([0, 1])
    before = col.search(data[:5], k=4)
    col.close()
    col = strata.Collection(coll_path)  # dim and metric come from the store
    assert (col.dim, col.metric, len(col)) == (8, "cosine", 298)
    vectors, payloads = col.get([2, 299, 0])
    np.testing.assert_array_equal(vectors[:2], data[[2, 299]])
    assert payloads == [b"p2", b"p299", None]
    after = col.search(data[:5], k=4)
    np.testing.assert_array_equal(before[0], after[0])
    col.close()
    with pytest.raises(ValueError, match="dim"):
        strata.Collection(coll_path, dim=9)
    with pytest.raises(ValueError, match="metric"):
        strata.Collection(coll_path, metric="l2")
    with strata.Collection(coll_path, dim=8, metric="cosine", index="graph") as again:
        assert len(again) == 298


def test_stats_flush_merge(coll_path, rng):
    data = rng.normal(size=(300, 8)).astype(np.float32)
    with strata.Collection(coll_path, dim=8, background_merge=False) as col:
        col.add(data)
        col.flush()
        stats = col.stats()
        assert stats["live"] == 300 and stats["index_version"] == 0 and stats["dim"] == 8
        assert stats["metric"] == "l2" and stats["element_type"] == "float32"
        assert {"pending", "deleted", "merges", "ram_bytes", "disk_bytes",
                "index_description", "last_sequence"} <= stats.keys()
        col.merge()  # 300 >= 256 vectors: builds the first index now
        col.wait_for_merge()
        stats = col.stats()
        assert stats["index_version"] == 1 and stats["indexed"] == 300
        ids, _ = col.search(data[:10], k=1, L=50)
        np.testing.assert_array_equal(ids[:, 0], np.arange(10))


def test_closed_collection(coll_path):
    with strata.Collection(coll_path, dim=4) as col:
        col.add(np.ones((2, 4), np.float32))
        assert not col.closed
    assert col.closed
    assert "closed" in repr(col)
    for call in (lambda: col.search(np.ones(4)), lambda: len(col), lambda: col.add(np.ones(4)),
                 lambda: col.get([0]), lambda: col.delete([0]), col.stats, col.flush, col.merge):
        with pytest.raises(ValueError, match="closed"):
            call()
    col.close()  # idempotent


def test_options_and_their_errors(coll_path):
    with pytest.raises(ValueError, match="'bogus'"):
        strata.Collection(coll_path, dim=4, bogus=1)
    with pytest.raises(ValueError, match="'Rx'"):
        strata.Collection(coll_path, dim=4, graph={"Rx": 3})
    with pytest.raises(ValueError, match="'threads'"):  # the collection sets it
        strata.Collection(coll_path, dim=4, graph={"threads": 2})
    with pytest.raises(ValueError, match="sometimes"):
        strata.Collection(coll_path, dim=4, durability="sometimes")
    with pytest.raises(TypeError, match="flat_threshold"):
        strata.Collection(coll_path, dim=4, flat_threshold="many")
    with pytest.raises(ValueError, match="hamming"):
        strata.Collection(coll_path, dim=4, metric="hamming")
    with pytest.raises(ValueError, match="dim"):
        strata.Collection(coll_path, dim=0)
    with pytest.raises(FileNotFoundError):
        strata.Collection(coll_path, dim=4, create_if_missing=False)
    with strata.Collection(coll_path, dim=4, durability="sync", element_type="float16",
                           graph={"R": 32, "profile": "baseline"}, ivf={"bits": 4},
                           open={"cache_nodes": 10}, merge_pending_count=100) as col:
        col.add(np.full((1, 4), 0.25, np.float32))
        assert col.stats()["element_type"] == "float16"
        with pytest.raises(ValueError, match="'bogus'"):
            col.search(np.ones(4), bogus=3)
        with pytest.raises(ValueError, match="same parameter"):
            col.search(np.ones(4), L=20, list_size=30)
    with pytest.raises(ValueError, match="exists"):
        strata.Collection(coll_path, error_if_exists=True)


def test_ivf_filter_codes_cost_their_ram_and_keep_filtered_search_exact(tmp_path, rng):
    # An IVF collection keeps 2-bit filter codes by default (d 32: D' 64, so
    # 12 + 64/8 = 20 bytes a vector); listed rows are ranked exactly either way.
    n, d = 3000, 32
    data = rng.normal(size=(n, d)).astype(np.float32)
    labels = [[i % 50] for i in range(n)]
    queries = rng.normal(size=(20, d)).astype(np.float32)
    keep = np.flatnonzero(np.arange(n) % 50 == 7)
    want, _ = brute_force(data[keep], queries, 10)
    ram = {}
    for codes in (None, False):
        extra = {} if codes is None else {"ivf": {"filter_codes": codes}}
        with strata.Collection(str(tmp_path / f"c{codes}"), dim=d, index="ivf",
                               flat_threshold=500, background_merge=False,
                               payload_index={"labels": "integer"}, **extra) as col:
            col.add(data, labels=labels)
            col.merge()
            ram[codes] = col.stats()["ram_bytes"]
            ids, _ = col.search(queries, k=10, filter={"must": [{"key": "labels", "match": {"value": 7}}]})
            np.testing.assert_array_equal(ids, keep[want])
    assert ram[None] - ram[False] == n * 20
    with pytest.raises(TypeError, match="filter_codes"):
        strata.Collection(str(tmp_path / "bad"), dim=d, ivf={"filter_codes": "yes"})


def test_search_filter_matches_filtered_brute_force(coll_path, rng):
    data = rng.normal(size=(300, 8)).astype(np.float32)
    groups = np.arange(300) % 3
    with strata.Collection(coll_path, dim=8) as col:
        col.add(data, payloads=[{"group": int(g), "even": bool(i % 2 == 0)} for i, g in enumerate(groups)])
        queries = rng.normal(size=(5, 8)).astype(np.float32)
        keep = np.flatnonzero(groups == 1)
        want, _ = brute_force(data[keep], queries, 10)
        for flt in ({"must": [{"key": "group", "match": {"value": 1}}]},
                    json.dumps({"must": {"key": "group", "match": {"any": [1]}}})):
            ids, dist = col.search(queries, k=10, filter=flt)
            assert set(ids.ravel().tolist()) <= set(keep.tolist())
            np.testing.assert_array_equal(ids, keep[want])  # flat phase: exact
        # nothing passes: every slot empty, not an error
        ids, dist = col.search(queries[0], k=4, filter={"must": [{"has_id": [100000]}]})
        assert (ids == strata.NO_ID).all() and np.isinf(dist).all()
        with pytest.raises(ValueError, match="filter.must\\[0\\].match: unknown key"):
            col.search(queries, filter={"must": [{"key": "group", "match": {"valu": 1}}]})
        with pytest.raises(TypeError, match="filter must be a dict"):
            col.search(queries, filter=[1, 2])


def class_data(rng, n, nq, dim=16, classes=6):
    # Points near `classes` centres, their classes, and queries near one
    # class each with another class to filter to.
    centres = 4.0 * rng.normal(size=(classes, dim))
    cls = rng.integers(classes, size=n)
    data = (centres[cls] + rng.normal(size=(n, dim))).astype(np.float32)
    qa = rng.integers(classes, size=nq)
    qb = (qa + 1 + rng.integers(classes - 1, size=nq)) % classes
    queries = (centres[qa] + rng.normal(size=(nq, dim))).astype(np.float32)
    return data, cls, queries, qb


def test_graph_label_field_finds_another_class(tmp_path, rng):
    # Points near 6 class centres, labelled by class; queries near one class
    # filtered to another, walking (no exact scan). The label-aware graph
    # walks that class's points from its start row; the ordinary graph's
    # walk stays near the query's own class.
    dim = 16
    data, cls, queries, qb = class_data(rng, 4000, 40, dim)
    found = {}
    for label_graph in (False, True):
        opts = {"graph_label_field": "labels"} if label_graph else {}
        with strata.Collection(tmp_path / f"c{int(label_graph)}", dim=dim, flat_threshold=300,
                               background_merge=False, payload_index={"labels": "integer"},
                               graph={"R": 24, "L": 48}, **opts) as col:
            col.add(data, labels=[[int(c)] for c in cls])
            col.merge()
            assert col.stats()["graph_label_field"] == ("labels" if label_graph else "")
            hits = 0
            for q, b in zip(queries, qb):
                keep = np.flatnonzero(cls == b)
                want, _ = brute_force(data[keep], q[None, :], 10)
                ids, _ = col.search(q, k=10, exact_scan_limit=0, L=64,
                                    filter={"must": [{"key": "labels", "match": {"value": int(b)}}]})
                assert all(cls[i] == b for i in ids[0] if i != strata.NO_ID)
                hits += len(set(ids[0].tolist()) & set(keep[want[0]].tolist()))
            found[label_graph] = hits / (10 * len(queries))
    assert found[True] >= 0.95, found
    assert found[True] > found[False] + 0.2, found
    with pytest.raises(ValueError, match="graph_label_field"):
        strata.Collection(tmp_path / "bad", dim=dim, graph_label_field="labels")


def test_graph_label_field_on_keywords(tmp_path, rng):
    # The same on a keyword field: keywords numbered by the collection's
    # stored dictionary, found again after reopening.
    dim = 16
    data, cls, queries, qb = class_data(rng, 3000, 30, dim)
    path = tmp_path / "kw"
    with strata.Collection(path, dim=dim, flat_threshold=300, background_merge=False,
                           payload_index={"tag": "keyword"}, graph_label_field="tag",
                           graph={"R": 24, "L": 48}) as col:
        col.add(data, payloads=[{"tag": f"class-{c}"} for c in cls])
        col.merge()
    with strata.Collection(path) as col:
        assert col.stats()["graph_label_field"] == "tag"
        hits = 0
        for q, b in zip(queries, qb):
            keep = np.flatnonzero(cls == b)
            want, _ = brute_force(data[keep], q[None, :], 10)
            ids, _ = col.search(q, k=10, exact_scan_limit=0, L=64,
                                filter={"must": [{"key": "tag", "match": {"value": f"class-{b}"}}]})
            assert all(cls[i] == b for i in ids[0] if i != strata.NO_ID)
            hits += len(set(ids[0].tolist()) & set(keep[want[0]].tolist()))
        assert hits / (10 * len(queries)) >= 0.95


def test_labels_fast_path(coll_path, rng):
    data = rng.normal(size=(300, 8)).astype(np.float32)
    labels = [[i % 3, 10 + i % 5] for i in range(300)]
    with strata.Collection(coll_path, dim=8) as col:
        col.add(data[:200], labels=labels[:200])
        # with payloads: merged into each dict; None payloads get the labels alone
        extra = [{"name": f"p{i}"} if i % 2 else None for i in range(200, 300)]
        col.add(data[200:], ids=np.arange(200, 300), labels=np.array(labels[200:]),
                payloads=extra)
        _, payloads = col.get([0, 201, 202])
        assert json.loads(payloads[0]) == {"labels": [0, 10]}
        assert json.loads(payloads[1]) == {"name": "p201", "labels": [0, 11]}
        assert json.loads(payloads[2]) == {"labels": [1, 12]}
        queries = rng.normal(size=(5, 8)).astype(np.float32)
        flt = {"must": [{"key": "labels", "match": {"value": 1}},
                        {"key": "labels", "match": {"value": 12}}]}
        keep = np.array([i for i in range(300) if i % 3 == 1 and i % 5 == 2])
        want, _ = brute_force(data[keep], queries, 10)
        ids, _ = col.search(queries, k=10, filter=flt)
        np.testing.assert_array_equal(ids, keep[want])  # flat phase: exact
        with pytest.raises(ValueError, match="labels has 2 entries for 1 vectors"):
            col.add(data[:1], labels=[[1], [2]])
        with pytest.raises(TypeError, match=r"labels\[0\] must be a sequence of ints"):
            col.add(data[:1], labels=[["a"]])
        with pytest.raises(ValueError, match="non-negative"):
            col.add(data[:1], labels=[[-1]])
        with pytest.raises(ValueError, match="'labels' key"):
            col.add(data[:1], labels=[[1]], payloads=[{"labels": [2]}])
        with pytest.raises(TypeError, match="must be a dict or None"):
            col.add(data[:1], labels=[[1]], payloads=[b"raw"])
        assert len(col) == 300


def test_payload_index_and_exact_scan(coll_path, rng):
    data = rng.normal(size=(3000, 8)).astype(np.float32)
    labels = [[i % 100, 1000 + i % 7] for i in range(3000)]
    queries = rng.normal(size=(20, 8)).astype(np.float32)
    flt = {"must": [{"key": "labels", "match": {"value": 42}}]}  # 1 % pass
    keep = np.array([i for i in range(3000) if i % 100 == 42])
    want, _ = brute_force(data[keep], queries, 10)
    opts = dict(flat_threshold=1024, background_merge=False,
                graph={"R": 16, "L": 32, "pq_bytes": 4, "opq_iterations": 0})
    with strata.Collection(coll_path, dim=8, payload_index={"labels": "integer"},
                           **opts) as col:
        col.add(data, labels=labels)
        col.merge()
        st = col.stats()
        assert st["payload_index"] == {"labels": "integer"}
        assert st["payload_index_bytes"] > 3000 * 16
        ids, _, qs = col.search(queries, k=10, filter=flt, return_stats=True)  # the exact scan
        np.testing.assert_array_equal(ids, keep[want])
        # the graph ranks the 30 candidates by code and reads at most L = 50 of them
        assert (qs["filter_candidates"] == 30).all()
        assert (qs["pages_read"] > 0).all() and (qs["pages_read"] <= 50).all()
        assert (qs["payload_reads"] == 0).all() and (qs["latency_us"] > 0).all()
        ids, _ = col.search(queries, k=10, filter=flt, exact_scan_limit=0, L=200)  # the walk
        assert set(ids.ravel()) <= set(keep.tolist()) | {strata.NO_ID}
        col.create_payload_index("labels", "integer")  # already there: nothing to do
        col.create_payload_index("name")
        with pytest.raises(ValueError, match="indexed as integer"):
            col.create_payload_index("labels", "keyword")
        with pytest.raises(ValueError, match="unknown field type"):
            col.create_payload_index("x", "text")
        with pytest.raises(ValueError, match="exact_scan_limit"):
            col.search(queries, filter=flt, exact_scan_limit=-1)
    with strata.Collection(coll_path) as col:  # the fields stay indexed
        assert col.stats()["payload_index"] == {"labels": "integer", "name": "keyword"}
        ids, _ = col.search(queries, k=10, filter=flt)
        np.testing.assert_array_equal(ids, keep[want])
    with pytest.raises(TypeError, match="payload_index must be a dict"):
        strata.Collection(coll_path, payload_index=["labels"])
    with pytest.raises(ValueError, match="unknown field type"):
        strata.Collection(coll_path, payload_index={"labels": "text"})


def test_close_stop_merges_abandons_a_running_merge(coll_path, rng):
    data = rng.normal(size=(30000, 16)).astype(np.float32)
    col = strata.Collection(coll_path, dim=16, graph={"L": 100}, merge_pending_count=1 << 30)
    col.add(data[:400])  # the threshold build (flat_threshold 1024 is not reached: merge() builds)
    col.merge()
    col.add(data[400:])
    errors = []

    def merge():
        try:
            col.merge()
        except Exception as e:  # noqa: BLE001 - the abandoned merge's error is the point
            errors.append(e)

    merger = threading.Thread(target=merge)
    merger.start()
    deadline = time.monotonic() + 20
    while not col.stats()["merging"] and time.monotonic() < deadline:
        time.sleep(0.005)
    assert col.stats()["merging"]
    start = time.monotonic()
    col.close(stop_merges=True)
    merger.join()
    assert time.monotonic() - start < 5
    assert len(errors) == 1 and "stopped" in str(errors[0])
    with strata.Collection(coll_path, merge_pending_count=1 << 30) as again:
        assert len(again) == 30000
        assert again.stats()["pending"] == 29600
        ids, _ = again.search(data[:5], k=1)
        np.testing.assert_array_equal(ids[:, 0], np.arange(5))


def test_in_place_updates(coll_path, rng):
    """update_mode="in_place": writes reach the SSD graph without merges, are
    found exactly once, and survive reopening; deletes are never returned."""
    data = clustered(rng, 3000, 16)
    opts = dict(dim=16, update_mode="in_place", flat_threshold=500, in_place_threads=2,
                in_place_L=48, in_place_back_edges=8, in_place_compaction=True, in_place_compaction_pause_ms=200,
                in_place_hot_page_heat=1, graph={"R": 24, "L": 48, "pq_bytes": 8})
    with strata.Collection(coll_path, **opts) as col:
        col.add(data[:500])
        for start in range(500, 3000, 250):
            col.add(data[start:start + 250], ids=np.arange(start, start + 250))
        assert col.delete(list(range(0, 3000, 10))) == 300
        for _ in range(600):
            if col.stats()["pending"] == 0:
                break
            time.sleep(0.05)
        stats = col.stats()
        assert stats["update_mode"] == "in_place"
        assert stats["pending"] == 0 and stats["index_version"] == 1 and stats["merges"] == 1
        assert stats["in_place_inserts"] >= 2000
        # Edge pages stay within twice the fewest that hold the lists
        # (R 24: 32 ids a list, about 30 lists a page; 3000 vertices).
        assert 0 < stats["in_place_live_edge_pages"] <= stats["in_place_edge_pages"]
        assert stats["in_place_live_edge_pages"] <= 2 * (3000 // 29 + 1)
        # Each insert writes at least one edge page, and the vector file's
        # sectors as they fill (the store keeps the last one's vectors).
        assert stats["in_place_insert_bytes_written"] >= 4096 * stats["in_place_inserts"]
        assert stats["in_place_insert_lists_changed"] > stats["in_place_inserts"]
        assert stats["in_place_upkeep_bytes_written"] > 0
        live = np.array([i for i in range(3000) if i % 10 != 0])
        queries = data[:50] + 0.01
        truth_rows, _ = brute_force(data[live], queries, 10)
        ids, _ = col.search(queries, k=10, L=64)
        assert not set(ids.ravel().tolist()) & set(range(0, 3000, 10))
        assert all(len(set(row)) == len(row) for row in ids.tolist())
        assert recall(ids, live[truth_rows]) >= 0.9
    with strata.Collection(coll_path) as col:  # the mode is stored
        assert col.stats()["update_mode"] == "in_place"
        assert len(col) == 2700
        ids, _ = col.search(queries, k=10, L=64)
        assert recall(ids, live[truth_rows]) >= 0.9
    with pytest.raises(ValueError):
        strata.Collection(coll_path, update_mode="buffered")
    with pytest.raises(ValueError):
        strata.Collection(coll_path, in_place_L=2)
