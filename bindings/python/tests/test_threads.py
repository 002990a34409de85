"""Threads: the GIL is released during real work, and one collection serves 8
searching threads while another thread upserts and deletes."""

import threading
import time

import numpy as np
from conftest import clustered

import strata


def _longest_stall_during(call):
    """Runs call() on this thread while a Python thread ticks; returns (seconds
    the call took, longest gap between two ticks during it). A call that holds
    the GIL stalls the ticker for its whole duration."""
    state = {"last": time.perf_counter(), "gap": 0.0, "on": False}
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            now = time.perf_counter()
            if state["on"]:
                state["gap"] = max(state["gap"], now - state["last"])
            state["last"] = now

    ticker = threading.Thread(target=tick)
    ticker.start()
    time.sleep(0.05)
    start = time.perf_counter()
    state["last"], state["on"] = start, True
    call()
    elapsed = time.perf_counter() - start
    state["gap"] = max(state["gap"], time.perf_counter() - state["last"])
    stop.set()
    ticker.join()
    return elapsed, state["gap"]


def _batch_lasting(seconds, make_batch, run):
    """Returns a batch for run() that takes at least `seconds` on this machine:
    the batch is doubled until the faster of two plain runs lasts that long.
    One timed run is not enough: a first run pays warm-up costs (cold pages,
    queues), so a batch sized from it can finish in a fraction of the
    intended time once warm (a CI run: 0.17 s of a 0.4 s batch)."""
    count = 64
    while True:
        batch = make_batch(count)
        fastest = float("inf")
        for _ in range(2):
            t0 = time.perf_counter()
            run(batch)
            fastest = min(fastest, time.perf_counter() - t0)
        if fastest >= seconds or count >= 1 << 22:
            return batch
        count *= 2


def test_gil_released_during_batch_search(coll_path):
    rng = np.random.default_rng(3)
    data = rng.normal(size=(1000, 64)).astype(np.float32)
    with strata.Collection(coll_path, dim=64) as col:
        col.add(data)
        # A batch of at least 0.4 s: long against a scheduler slice.
        queries = _batch_lasting(
            0.4, lambda n: rng.normal(size=(n, 64)).astype(np.float32),
            lambda q: col.search(q, k=10, threads=1))
        elapsed, gap = _longest_stall_during(lambda: col.search(queries, k=10, threads=1))
    assert elapsed > 0.2
    assert gap < elapsed / 2, f"ticker stalled {gap:.3f} s of a {elapsed:.3f} s search"


def test_gil_released_during_build_and_index_search(tmp_path):
    rng = np.random.default_rng(9)
    base = clustered(rng, 2000, 32)
    path = tmp_path / "graph"
    elapsed, gap = _longest_stall_during(
        lambda: strata.build_index(base, path, R=32, L=64, threads=1))
    assert elapsed > 0.2
    assert gap < elapsed / 2, f"ticker stalled {gap:.3f} s of a {elapsed:.3f} s build"
    with strata.Index.open(path) as index:
        distinct = clustered(rng, 20, 32)
        queries = _batch_lasting(
            0.4, lambda n: np.tile(distinct, (n // len(distinct) + 1, 1)),
            lambda q: index.search(q, k=10, threads=1))
        elapsed, gap = _longest_stall_during(lambda: index.search(queries, k=10, threads=1))
    assert elapsed > 0.2
    assert gap < elapsed / 2, f"ticker stalled {gap:.3f} s of a {elapsed:.3f} s search"


def test_concurrent_search_while_writing(coll_path):
    rng = np.random.default_rng(5)
    dim = 16
    data = clustered(rng, 3000, dim)
    n0 = 1500
    errors = []
    deleted = set()  # ids whose delete() has returned; never re-added
    deleted_lock = threading.Lock()
    stop = threading.Event()
    with strata.Collection(coll_path, dim=dim, merge_pending_count=300,
                           merge_pending_ratio=0.0) as col:
        col.add(data[:n0])  # crosses the threshold: an SSD index plus a pending list later
        assert col.stats()["index_version"] >= 1

        def writer():
            try:
                for begin in range(n0, len(data), 50):
                    col.add(data[begin:begin + 50], ids=np.arange(begin, begin + 50))
                    victims = list(range(begin - n0, begin - n0 + 25))
                    col.delete(victims)
                    with deleted_lock:
                        deleted.update(victims)
            except Exception as e:  # noqa: BLE001 - reported by the main thread
                errors.append(e)
            finally:
                stop.set()

        def searcher(seed):
            local = np.random.default_rng(seed)
            searches = 0
            try:
                while not stop.is_set() or searches < 5:
                    with deleted_lock:
                        gone = set(deleted)
                    rows = local.integers(0, len(data), size=4)
                    ids, dists = col.search(data[rows], k=5, L=40, threads=1)
                    searches += 1
                    assert ids.shape == (4, 5)
                    valid = ids[ids != strata.NO_ID]
                    assert (valid < len(data)).all()
                    # A delete that returned before this search began is visible to it.
                    assert not gone.intersection(valid.tolist())
                    assert (np.diff(dists, axis=1) >= 0).all()
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=searcher, args=(i,)) for i in range(8)]
        threads.append(threading.Thread(target=writer))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        col.wait_for_merge()
        stats = col.stats()
        assert stats["merges"] >= 1  # background merges ran while the threads searched
        assert len(col) == len(data) - len(deleted)
        ids, _ = col.search(data[-20:], k=1)
        np.testing.assert_array_equal(ids[:, 0], np.arange(len(data) - 20, len(data)))


def test_threads_share_one_index(tmp_path):
    rng = np.random.default_rng(11)
    base = clustered(rng, 800, 16)
    queries = clustered(rng, 30, 16)
    strata.build_index(base, tmp_path / "ivf", type="ivf", clusters=2, threads=1)
    errors = []
    with strata.Index.open(tmp_path / "ivf") as index:
        want = index.search(queries, k=5, nprobe=2, threads=1)[0]

        def search():
            try:
                for _ in range(10):
                    np.testing.assert_array_equal(index.search(queries, k=5, nprobe=2)[0], want)
            except Exception as e:  # noqa: BLE001
                errors.append(e)

        threads = [threading.Thread(target=search) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors
