#!/usr/bin/python3
"""kill -9 of `strata serve` during wait=true upserts: every acknowledged point survives.

usage: kill_test.py STRATA_CLI [--rounds N] [--seed S]

Each round starts the server on a free loopback port over one data directory,
has client threads send upsert batches (new ids, and overwrites of their own
earlier ids) with wait=true, and kills the server with SIGKILL at a random
moment. After a restart every acknowledged point must be there with its
vector and payload (or with the value of that thread's one batch in flight
at the kill, which may or may not have landed), and count, scroll and
retrieve must agree. The collection keeps growing across rounds, so later
kills land around the first index build (at 1024 points) and merges.
The first round also checks, over HTTP, that an oversized body gets a 413
and a deeply nested one a 400.
Exit 77 (skip) when the `requests` module is missing.
"""
import argparse
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

try:
    import requests
except ImportError:
    print("kill_test: python3 requests is not installed; skipping")
    sys.exit(77)

DIM = 8
MAX_BODY = 1 << 20
COLLECTION = "k"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, cli, data, log):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.proc = subprocess.Popen(
            [cli, "serve", "--data", data, "--port", str(self.port), "--max-body-bytes", str(MAX_BODY)],
            stdout=log, stderr=log)
        deadline = time.time() + 60
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("server exited with %d at start" % self.proc.returncode)
            try:
                if requests.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.05)
        raise RuntimeError("server not ready in 60 s")

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        # A graceful stop abandons a background merge in progress (its input
        # is durable) rather than waiting for it, which took minutes: the
        # server must be gone within seconds.
        start = time.monotonic()
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=60)
        print("graceful stop took %.1f s" % (time.monotonic() - start), flush=True)
        return code


def vector(rng):
    # Multiples of 1/1024: exact in float32, so returned vectors compare equal.
    return [rng.randrange(-4096, 4096) / 1024.0 for _ in range(DIM)]


class Client(threading.Thread):
    """Owns the ids equal to its index modulo the thread count; one batch in flight at a time."""

    def __init__(self, url, index, threads, points, rnd, rng):
        super().__init__(daemon=True)
        self.url, self.index, self.threads, self.rnd = url, index, threads, rnd
        self.points = points  # id -> (vector, payload): this thread's acknowledged points
        self.rng = rng
        self.in_flight = {}
        self.acked_batches = 0
        self.error = None

    def run(self):
        session = requests.Session()
        while True:
            mine = list(self.points)
            batch = {}
            for _ in range(self.rng.randrange(1, 120)):
                if mine and self.rng.random() < 0.2:
                    pid = self.rng.choice(mine)  # overwrite one of ours
                else:
                    pid = self.index + self.threads * (len(self.points) + len(batch) + 1000 * self.rnd)
                    while pid in self.points or pid in batch:
                        pid += self.threads
                batch[pid] = (vector(self.rng), {"round": self.rnd, "t": self.index, "r": self.rng.random()})
            body = {"points": [{"id": pid, "vector": v, "payload": p} for pid, (v, p) in batch.items()]}
            self.in_flight = batch
            try:
                r = session.put(self.url + "/collections/%s/points?wait=true" % COLLECTION,
                                json=body, timeout=30)
            except requests.RequestException:
                return  # the server is gone: this batch's outcome is unknown
            if r.status_code != 200:
                self.error = "upsert: %d %s" % (r.status_code, r.text[:300])
                return
            self.in_flight = {}
            self.points.update(batch)
            self.acked_batches += 1


def check_limits(url):
    # An oversized body: refused by the HTTP layer, the server stays up.
    big = b'{"points": [' + b" " * (2 * MAX_BODY) + b"]}"
    r = requests.put(url + "/collections/%s/points" % COLLECTION, data=big,
                     headers={"Content-Type": "application/json"}, timeout=30)
    assert r.status_code == 413, (r.status_code, r.text[:200])
    deep = '{"points": [{"id": 1, "vector": [0], "payload": {"a": %s1%s}}]}' % ("[" * 10000, "]" * 10000)
    r = requests.put(url + "/collections/%s/points" % COLLECTION, data=deep, timeout=30)
    assert r.status_code == 400, (r.status_code, r.text[:200])
    r = requests.post(url + "/collections/%s/points/search" % COLLECTION,
                      data='{"vector": [1e39, 0, 0, 0, 0, 0, 0, 0]}', timeout=30)
    assert r.status_code == 400, (r.status_code, r.text[:200])
    assert requests.get(url + "/healthz", timeout=5).status_code == 200


def verify(url, states, in_flight):
    """Every acknowledged point is there (or its in-flight replacement)."""
    acked = {}
    for st in states:
        acked.update(st)
    maybe = {}
    for f in in_flight:
        maybe.update(f)
    s = requests.Session()
    ids = sorted(set(acked) | set(maybe))
    all_got = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        r = s.post(url + "/collections/%s/points" % COLLECTION,
                   json={"ids": chunk, "with_payload": True, "with_vector": True}, timeout=60)
        assert r.status_code == 200, r.text[:300]
        got = {p["id"]: (p["vector"], p["payload"]) for p in r.json()["result"]}
        all_got.update(got)
        for pid in chunk:
            if pid not in acked:
                continue  # in flight only: may be there or not
            assert pid in got, "acknowledged point %d is missing" % pid
            if got[pid] != acked[pid]:
                assert pid in maybe and got[pid] == maybe[pid], (
                    "point %d: got %r, acknowledged %r" % (pid, got[pid], acked[pid]))
    # scroll lists exactly the ids that are there; count agrees.
    listed, offset = [], None
    while True:
        body = {"limit": 1000, "with_payload": False}
        if offset is not None:
            body["offset"] = offset
        r = s.post(url + "/collections/%s/points/scroll" % COLLECTION, json=body, timeout=60)
        assert r.status_code == 200, r.text[:300]
        listed += [p["id"] for p in r.json()["result"]["points"]]
        offset = r.json()["result"]["next_page_offset"]
        if offset is None:
            break
    listed = set(listed)
    assert set(acked) <= listed, "scroll misses %d acknowledged ids" % len(set(acked) - listed)
    extra = listed - set(acked)
    assert extra <= set(maybe), "scroll lists ids never sent: %r" % sorted(extra - set(maybe))[:10]
    count = s.post(url + "/collections/%s/points/count" % COLLECTION, json={"exact": True},
                   timeout=60).json()["result"]["count"]
    assert count == len(listed), "count %d != %d ids listed" % (count, len(listed))
    info = s.get(url + "/collections/%s" % COLLECTION, timeout=60).json()["result"]
    assert info["points_count"] == count, (info["points_count"], count)
    # What landed of the batches in flight is durable now: later rounds expect it.
    landed = {pid: v for pid, v in maybe.items() if all_got.get(pid) == v}
    return len(acked), landed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--threads", type=int, default=3)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("STRATA_KILL_SEED", time.time())))
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print("kill_test: seed %d" % args.seed, flush=True)
    data = tempfile.mkdtemp(prefix="strata_kill_test_")
    log = open(os.path.join(data, "server.log"), "ab")
    states = [{} for _ in range(args.threads)]
    ok = False
    try:
        for rnd in range(args.rounds):
            server = Server(args.cli, data, log)
            if rnd == 0:
                r = requests.put(server.url + "/collections/" + COLLECTION,
                                 json={"vectors": {"size": DIM, "distance": "Euclid"}}, timeout=30)
                assert r.status_code == 200, r.text
                check_limits(server.url)
            clients = [Client(server.url, i, args.threads, states[i], rnd, random.Random(rng.random()))
                       for i in range(args.threads)]
            for c in clients:
                c.start()
            time.sleep(rng.uniform(0.3, 2.5))
            server.kill9()
            for c in clients:
                c.join(timeout=60)
                assert not c.is_alive(), "a client hangs after the kill"
                assert c.error is None, c.error
            batches = sum(c.acked_batches for c in clients)
            server = Server(args.cli, data, log)
            n, landed = verify(server.url, states, [c.in_flight for c in clients])
            for c in clients:
                c.points.update({pid: v for pid, v in landed.items() if pid in c.in_flight})
            print("round %d: %d batches acknowledged before the kill; %d acknowledged points all "
                  "present after restart (%d in-flight points landed)" % (rnd, batches, n, len(landed)),
                  flush=True)
            if rnd == args.rounds - 1:
                assert server.stop() == 0, "graceful stop failed"
            else:
                server.kill9()  # an idle kill too: nothing acknowledged may depend on a clean close
        ok = True
    finally:
        log.close()
        if ok:
            shutil.rmtree(data, ignore_errors=True)
        else:
            print("kill_test: FAILED (seed %d); data and server.log kept in %s" % (args.seed, data))
    print("kill_test: passed")


if __name__ == "__main__":
    main()
