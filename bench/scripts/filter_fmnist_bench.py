#!/usr/bin/python3
"""Filtered collection search on Fashion-MNIST with its real class labels.

usage: PYTHONPATH=build/release/python /usr/bin/python3 bench/scripts/filter_fmnist_bench.py
           --dir SCRATCH [--index graph|ivf] [--threads 2] [--nq 500]
           [--source /usr/share/datasets/fashion-mnist] [--out bench/results/filter_fmnist_graph]

Data: the 60,000 training images (784-d, L2 on pixel values 0..255) with
their class (0..9) as the integer payload field "class", declared with
payload_index; queries are test images (Debian package dataset-fashion-mnist).
Each class holds 10 % of the base, so the buckets differ by where the
passing points lie, not by how many pass:
  - own class: the query's own class (the neighbours mostly pass);
  - other class: a class the query is not of (the passing points lie away
    from the query's neighbourhood: the hard case for a walk);
  - two other classes: `match any` of two such classes (20 %).
Per bucket, against exact filtered ground truth (numpy over the passing
images): default (what a user gets), the filter checked inside the walk at
several L or nprobe, post-filtering (k' = L unfiltered results, failing ones
dropped) and the exact filtered scan (exact_scan_limit above the passing
count: every passing image ranked, graph by code then exact, IVF by stored
vector). Writes OUT.json and OUT.md.
"""

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from filter_collection_bench import open_or_build, run_queries, summarise, truth  # noqa: E402


SOURCE = "/usr/share/datasets/fashion-mnist"


def read_idx(path, images):
    if not os.path.exists(path):
        sys.exit(f"missing {path}: apt-get update && apt-get install -y dataset-fashion-mnist")
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if images:
        n, rows, cols = (int(x) for x in np.frombuffer(raw[4:16], dtype=">u4"))
        return np.frombuffer(raw[16:], dtype=np.uint8).reshape(n, rows * cols).astype(np.float32)
    return np.frombuffer(raw[8:], dtype=np.uint8).astype(np.int64)


def class_filter(classes):
    if len(classes) == 1:
        return {"must": [{"key": "class", "match": {"value": int(classes[0])}}]}
    return {"must": [{"key": "class", "match": {"any": [int(c) for c in classes]}}]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dir", required=True, help="scratch directory for the collection")
    ap.add_argument("--index", choices=["graph", "ivf"], default="graph")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--nq", type=int, default=500)
    ap.add_argument("--source", default=SOURCE)
    ap.add_argument("--out", required=True)
    ap.add_argument("--reuse", action="store_true",
                    help="search the collection left in --dir by an earlier run instead of building it")
    args = ap.parse_args()

    base = read_idx(os.path.join(args.source, "train-images-idx3-ubyte.gz"), True)
    base_cls = read_idx(os.path.join(args.source, "train-labels-idx1-ubyte.gz"), False)
    qry = read_idx(os.path.join(args.source, "t10k-images-idx3-ubyte.gz"), True)[:args.nq]
    qry_cls = read_idx(os.path.join(args.source, "t10k-labels-idx1-ubyte.gz"), False)[:args.nq]
    n = len(base)
    coll_dir = os.path.join(args.dir, f"fmnist_{args.index}")

    def fill(col):
        payloads = [json.dumps({"class": int(c)}) for c in base_cls]
        for b in range(0, n, 10000):
            col.add(base[b:b + 10000], ids=np.arange(b, min(n, b + 10000)),
                    payloads=payloads[b:b + 10000])

    col, build_s = open_or_build(coll_dir, args.reuse, fill, dim=base.shape[1], index=args.index,
                                 payload_index={"class": "integer"})
    st = col.stats()
    rng = np.random.default_rng(5)
    members = {c: np.flatnonzero(base_cls == c) for c in range(10)}

    def others(c, count):
        return rng.choice([x for x in range(10) if x != c], size=count, replace=False)

    buckets = [("own class", [[int(c)] for c in qry_cls]),
               ("other class", [others(c, 1).tolist() for c in qry_cls]),
               ("two other classes", [others(c, 2).tolist() for c in qry_cls])]
    knob, values = ("L", [50, 100, 200]) if args.index == "graph" else ("nprobe", [10, 20, 40])
    report = {"data": {"name": "fashion-mnist", "n": n, "dim": int(base.shape[1]), "nq": len(qry),
                       "source": args.source},
              "index": args.index, "threads": args.threads, "machine": "2 cores (this VM)",
              "build_seconds": build_s, "payload_index_bytes_per_vector": st["payload_index_bytes"] / n,
              "ram_bytes": st["ram_bytes"], "buckets": []}
    for name, picks in buckets:
        passing = [np.sort(np.concatenate([members[c] for c in p])) for p in picks]
        gt = truth(base, qry, passing)
        filters = [class_filter(p) for p in picks]
        spec = float(np.mean([len(p) for p in passing])) / n
        b = {"bucket": name, "mean_specificity": spec, "nq": len(qry), "modes": []}

        def add(mode, v, ids, stats, secs, keep=None):
            b["modes"].append({"mode": mode, knob: v, **summarise(ids, stats, secs, gt, keep=keep)})

        add("default", "-", *run_queries(col, qry, filters, args.threads, 10))
        keep = [set(p.tolist()) for p in passing]
        for v in values:
            add("walk", v, *run_queries(col, qry, filters, args.threads, 10, exact_scan_limit=0, **{knob: v}))
            kk = v if args.index == "graph" else 100
            add(f"post-filter k'={kk}", v,
                *run_queries(col, qry, None, args.threads, kk, **{knob: v}), keep=keep)
        add("exact filtered scan", "-",
            *run_queries(col, qry, filters, args.threads, 10, exact_scan_limit=n))
        add("unfiltered", values[0], *run_queries(col, qry, None, args.threads, 10, **{knob: values[0]}))
        report["buckets"].append(b)
        print(json.dumps({"bucket": name, "default": b["modes"][0]}), flush=True)
    col.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    lines = [f"# Filtered collection search, Fashion-MNIST real class labels, {args.index} index",
             "", f"Command: `PYTHONPATH=build/release/python {' '.join(sys.argv)}`",
             f"Data: {n:,} x {base.shape[1]} training images, {len(qry)} test images as queries, "
             f"exact filtered ground truth. Machine: {report['machine']}; {args.threads} search "
             f"threads, one query per call. Build (add + merge): {build_s:.0f} s.", "",
             f"| bucket | specificity | mode | {knob} | recall@10 | QPS | p50 ms | p99 ms | pages/q | candidates/q |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for b in report["buckets"]:
        for s in b["modes"]:
            r = s.get("recall_at_10", float("nan")) if s["mode"] != "unfiltered" else float("nan")
            lines.append(f"| {b['bucket']} | {b['mean_specificity']:.3f} | {s['mode']} | {s[knob]} | "
                         f"{r:.3f} | {s['qps']:.0f} | {s['p50_us'] / 1000:.2f} | "
                         f"{s['p99_us'] / 1000:.2f} | {s['pages_per_query']:.1f} | "
                         f"{s['candidates_per_query']:.0f} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
