#!/usr/bin/env python3
"""Filtered search by labels on a static index, per specificity bucket.

usage: /usr/bin/python3 bench/scripts/filter_labels_bench.py --cli STRATA --data DIR
           --base B.fbin --queries Q.fbin --graph IDX --ivf IDX [--threads 2]
           [--out bench/results/filter_labels]

Labels: 1,000 labels drawn Zipf-like (label r with probability 0.5 / (r + 1),
independently per vector, at least one per vector: the shape of YFCC-10M's
tags), written as a DiskANN label file. Queries get one label or two (AND)
chosen so that the fraction of base vectors passing falls in each bucket:
about 50 %, 10 %, 1 %, 0.1 % and 0.01 %. For each bucket: exact filtered
ground truth (`strata gt --base-labels --query-labels`), then `strata bench`
with the same labels for the graph index (L sweep) and the IVF index (nprobe
sweep), filter checked inside the search; and post-filtering for the graph
(unfiltered search for k' = L results, drop those failing, keep 10). Reports
recall@10, QPS, p50/p99 latency and pages per query. Writes OUT.json, OUT.md.
"""

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

BUCKETS = [0.5, 0.1, 0.01, 0.001, 0.0001]
NUM_LABELS = 1000


def run(cmd, capture=False):
    print("+", " ".join(map(str, cmd)), flush=True)
    r = subprocess.run(list(map(str, cmd)), check=True, capture_output=True, text=True)
    return r.stdout


def read_bin_header(path):
    return tuple(int(x) for x in np.fromfile(path, dtype=np.uint32, count=2))


def read_ibin(path):
    n, k = read_bin_header(path)
    return np.fromfile(path, dtype=np.uint32, offset=8, count=n * k).reshape(n, k)


def write_labels(path, rows):
    with open(path, "w") as f:
        for r in rows:
            f.write(",".join(str(x) for x in sorted(r)) + "\n")


def make_base_labels(n, rng):
    p = (0.5 / (np.arange(NUM_LABELS) + 1.0)).astype(np.float32)
    rows = []
    for begin in range(0, n, 10000):
        has = rng.random((min(10000, n - begin), NUM_LABELS), dtype=np.float32) < p[None, :]
        for i in range(len(has)):
            labels = np.flatnonzero(has[i])
            rows.append(labels.tolist() if len(labels) else [int(rng.integers(NUM_LABELS))])
    return rows


def label_sets(rows):
    sets = [set() for _ in range(NUM_LABELS)]
    for i, r in enumerate(rows):
        for l in r:
            sets[l].add(i)
    return sets


def choose_query_labels(sets, n, nq, target, rng):
    """Per query a label or a label pair whose pass fraction is within a factor
    of 2 of `target`; candidates drawn at random among those that qualify."""
    freq = np.array([len(s) for s in sets]) / n
    singles = [(l,) for l in range(NUM_LABELS) if target / 2 <= freq[l] <= target * 2]
    pairs = []
    if len(singles) < 5:
        cand = [l for l in range(NUM_LABELS) if freq[l] >= target]
        tried = 0
        while len(pairs) < 50 and tried < 20000 and len(cand) >= 2:
            a, b = rng.choice(cand, 2, replace=False)
            tried += 1
            if freq[a] * freq[b] > target * 4 or freq[a] * freq[b] < target / 4:
                continue
            f = len(sets[a] & sets[b]) / n
            if target / 2 <= f <= target * 2:
                pairs.append((int(min(a, b)), int(max(a, b))))
    pool = singles + pairs
    if not pool:
        raise SystemExit(f"no label or pair with specificity near {target}")
    picks = [pool[i] for i in rng.integers(len(pool), size=nq)]
    spec = [len(set.intersection(*[sets[l] for l in p])) / n for p in picks]
    return picks, float(np.mean(spec)), len(singles), len(pairs)


def bench(cli, index, queries, gt, labels, qlabels, knob, values, threads):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        cmd = [cli, "bench", "--index", index, "--queries", queries, "--gt", gt, "--k", 10,
               "--threads", threads, "--json", out.name, f"--{knob}", ",".join(map(str, values))]
        if labels:
            cmd += ["--base-labels", labels, "--query-labels", qlabels]
        run(cmd)
        return json.load(open(out.name))["rows"]


def post_filter(cli, index, queries, gt_path, base_rows, picks, L, threads):
    with tempfile.TemporaryDirectory() as tmp:
        res = Path(tmp) / "res.ibin"
        stats = Path(tmp) / "stats.json"
        run([cli, "search", "--index", index, "--queries", queries, "--k", L, "--L", L,
             "--threads", threads, "--out", res, "--stats", stats])
        ids = read_ibin(res)
        st = json.load(open(stats))
    gt = read_ibin(gt_path)[:, :10]
    need = [set(p) for p in picks]
    hits = 0
    for q in range(len(ids)):
        kept = [i for i in ids[q] if i != 0xFFFFFFFF and need[q] <= base_rows[i]][:10]
        truth = set(int(x) for x in gt[q] if x != 0xFFFFFFFF)
        hits += len(truth & set(int(x) for x in kept)) / max(1, min(10, len(truth)))
    return {"L": L, "recall_at_k": hits / len(ids), "qps": st["qps"],
            "p50_latency_us": st["p50_latency_us"], "p99_latency_us": st["p99_latency_us"],
            "mean_pages_read": st["mean_pages_read"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name in ("cli", "data", "base", "queries", "graph", "ivf"):
        ap.add_argument(f"--{name}", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--nq", type=int, default=1000)
    ap.add_argument("--out", default="bench/results/filter_labels")
    a = ap.parse_args()
    rng = np.random.default_rng(11)
    data = Path(a.data)
    data.mkdir(parents=True, exist_ok=True)
    n, dim = read_bin_header(a.base)
    nq_file, _ = read_bin_header(a.queries)
    nq = min(a.nq, nq_file)
    queries = a.queries
    if nq < nq_file:
        q = np.fromfile(a.queries, dtype=np.float32, offset=8, count=nq * dim)
        queries = str(data / f"queries_{nq}.fbin")
        with open(queries, "wb") as f:
            np.array([nq, dim], dtype=np.uint32).tofile(f)
            q.tofile(f)
    t0 = time.time()
    rows = make_base_labels(n, rng)
    base_labels = data / "base_labels.txt"
    write_labels(base_labels, rows)
    base_rows = [frozenset(r) for r in rows]
    sets = label_sets(rows)
    print(f"labels: {n} rows, mean {np.mean([len(r) for r in rows]):.2f} per vector, "
          f"{time.time() - t0:.0f} s", flush=True)
    report = {"data": f"{a.base} ({n} x {dim}), {nq} queries",
              "labels": "1000 labels, P(label r) = 0.5/(r+1) independently, >= 1 per vector",
              "mean_labels_per_vector": float(np.mean([len(r) for r in rows])),
              "threads": a.threads, "machine": f"{os.uname().nodename} {os.cpu_count()} cores",
              "buckets": []}
    for target in BUCKETS:
        picks, spec, n_single, n_pair = choose_query_labels(sets, n, nq, target, rng)
        qlabels = data / f"query_labels_{target}.txt"
        write_labels(qlabels, picks)
        gt = data / f"gt_{target}.ibin"
        run([a.cli, "gt", "--base", a.base, "--queries", queries, "--k", 10, "--out", gt,
             "--base-labels", base_labels, "--query-labels", qlabels])
        entry = {"target_specificity": target, "mean_specificity": spec,
                 "single_label_queries": sum(len(p) == 1 for p in picks),
                 "pair_queries": sum(len(p) == 2 for p in picks),
                 "graph_filtered": bench(a.cli, a.graph, queries, gt, base_labels, qlabels, "L",
                                         [10, 20, 50, 100, 200, 400], a.threads),
                 "ivf_filtered": bench(a.cli, a.ivf, queries, gt, base_labels, qlabels, "nprobe",
                                       [5, 10, 20, 40, 80, 160], a.threads),
                 "graph_post_filter": [post_filter(a.cli, a.graph, queries, gt, base_rows, picks,
                                                   L, a.threads) for L in (50, 200, 800)]}
        print(json.dumps({k: v for k, v in entry.items() if "filter" not in k}), flush=True)
        report["buckets"].append(entry)
        Path(a.out).with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(report, Path(a.out))


def write_markdown(report, out):
    lines = ["# Filtered search by labels (static indexes), per specificity bucket", "",
             f"- data: {report['data']}; labels: {report['labels']} "
             f"(mean {report['mean_labels_per_vector']:.2f} per vector)",
             f"- {report['threads']} search threads, every read O_DIRECT; machine "
             f"{report['machine']}", "- filtered = the query's labels checked inside the "
             "search (graph walk / IVF scan); post-filter = unfiltered search for k' = L, "
             "then filtered, top 10", "",
             "| specificity | method | setting | recall@10 | QPS | p50 / p99 us | pages/q |",
             "|---|---|---|---|---|---|---|"]
    for b in report["buckets"]:
        spec = f"{100 * b['mean_specificity']:.3g} %"
        for method, key, knob in (("graph, filtered", "graph_filtered", "L"),
                                  ("IVF, filtered", "ivf_filtered", "nprobe"),
                                  ("graph, post-filter", "graph_post_filter", "L")):
            for r in b[key]:
                lines.append(f"| {spec} | {method} | {knob} {r[knob]} | "
                             f"{r['recall_at_k']:.4f} | {r['qps']:.0f} | "
                             f"{r['p50_latency_us']:.0f} / {r['p99_latency_us']:.0f} | "
                             f"{r['mean_pages_read']:.1f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
