#!/usr/bin/python3
"""Filtered search on a collection with a payload index, per specificity bucket.

usage: PYTHONPATH=build/release/python /usr/bin/python3 bench/scripts/filter_collection_bench.py
           --base B.fbin --queries Q.fbin --dir SCRATCH [--index graph|ivf] [--threads 2]
           [--nq-per-bucket 200] [--out bench/results/filter_collection_synth200k_graph]
           [--ivf-filter-codes on|off]

Labels as bench/scripts/filter_labels_bench.py draws them (1,000 Zipf-like
labels, several per vector), stored through Collection.add(labels=...) into
the integer payload field "labels", declared with payload_index. Queries get
one label or two (AND) whose pass fraction is near each bucket: 50 %, 10 %,
1 %, 0.1 %, 0.01 %. Per bucket, against exact filtered ground truth (numpy
over the passing vectors):
  - default: what a user gets (exact scan when the payload index bounds the
    candidates by exact_scan_limit = 4096, else the filtered walk);
  - walk: the filter checked inside the walk only (exact_scan_limit = 0), at
    several L (graph) or nprobe (IVF);
  - post-filter: an unfiltered search for k' results, those failing dropped.
Also the unfiltered search at the same parameters (the cost with no filter).
Reports recall@10, QPS with `--threads` threads (one query per call, the
filter differs per query), p50/p99 latency and SSD pages per query. Writes
OUT.json and OUT.md.
"""

import argparse
import json
import os
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from filter_labels_bench import BUCKETS, choose_query_labels, label_sets, make_base_labels  # noqa: E402

import strata  # noqa: E402


def read_fbin(path):
    n, d = (int(x) for x in np.fromfile(path, dtype=np.uint32, count=2))
    return np.fromfile(path, dtype=np.float32, offset=8, count=n * d).reshape(n, d)


def filter_of(pick):
    return {"must": [{"key": "labels", "match": {"value": int(l)}} for l in pick]}


def truth(base, queries, passing, k=10):
    out = []
    for q, ids in zip(queries, passing):
        d = ((base[ids] - q) ** 2).sum(axis=1)
        order = np.argsort(d, kind="stable")[:k]
        out.append(ids[order])
    return out


def open_or_build(coll_dir, reuse, fill, **options):
    """The collection in coll_dir: reopened as an earlier run left it when
    `reuse` (build seconds nan), else created anew with `options`, filled by
    fill(col) and merged. Returns (collection, build seconds)."""
    t0 = time.perf_counter()
    if reuse and os.path.isdir(coll_dir):
        return strata.Collection(coll_dir, background_merge=False), float("nan")
    shutil.rmtree(coll_dir, ignore_errors=True)
    col = strata.Collection(coll_dir, background_merge=False, **options)
    fill(col)
    col.merge()
    return col, time.perf_counter() - t0


def run_queries(col, queries, filters, threads, k, **params):
    """One search call per query on `threads` threads; returns ids, stats, seconds."""
    def one(i):
        flt = filters[i] if filters is not None else None
        ids, _, st = col.search(queries[i], k=k, filter=flt, return_stats=True, **params)
        return ids[0], {key: float(v[0]) for key, v in st.items()}

    with ThreadPoolExecutor(threads) as pool:
        # warm-up on the pool's own threads: first reads of fresh files are
        # slow, and each thread's first search sets up its searcher (a
        # single-threaded warm-up left the first measured batch at 0.4x)
        list(pool.map(one, range(min(20 * threads, len(queries)))))
        start = time.perf_counter()
        results = list(pool.map(one, range(len(queries))))
        seconds = time.perf_counter() - start
    return [r[0] for r in results], [r[1] for r in results], seconds


def summarise(ids, stats, seconds, gt, keep=None):
    hits = total = 0
    for i, row in enumerate(ids):
        row = [x for x in row if x != strata.NO_ID]
        if keep is not None:
            row = [x for x in row if x in keep[i]][:10]
        hits += len(set(row[:10]) & set(gt[i].tolist()))
        total += min(10, len(gt[i]))
    lat = np.array([s["latency_us"] for s in stats])
    return {
        "recall_at_10": hits / max(total, 1),
        "qps": len(ids) / seconds,
        "p50_us": float(np.percentile(lat, 50)),
        "p99_us": float(np.percentile(lat, 99)),
        "pages_per_query": float(np.mean([s["pages_read"] for s in stats])),
        "io_wait_us_mean": float(np.mean([s.get("io_wait_us", 0.0) for s in stats])),
        "latency_us_mean": float(np.mean(lat)),
        "candidates_per_query": float(np.mean([s["filter_candidates"] for s in stats])),
        "payload_reads_per_query": float(np.mean([s["payload_reads"] for s in stats])),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--dir", required=True, help="scratch directory for the collection")
    ap.add_argument("--index", choices=["graph", "ivf"], default="graph")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--nq-per-bucket", type=int, default=200)
    ap.add_argument("--out", required=True)
    ap.add_argument("--values", default="",
                    help="comma-separated L (graph) or nprobe (IVF) for the walk and post-filter rows")
    ap.add_argument("--quick", action="store_true",
                    help="default, exact-scan and one unfiltered row per bucket only")
    ap.add_argument("--buckets", default="",
                    help="comma-separated bucket targets to run (default: all); the others' "
                         "queries are still drawn, so every bucket gets the same queries")
    ap.add_argument("--reuse", action="store_true",
                    help="search the collection left in --dir by an earlier run instead of building it")
    ap.add_argument("--warmup-seconds", type=float, default=5.0,
                    help="unfiltered searches before the first measured batch")
    ap.add_argument("--ivf-filter-codes", choices=["on", "off"], default="on",
                    help="IVF: keep the 2-bit filter codes in RAM (the collection default, on); "
                         "off lives in coll_ivf_nocodes")
    ap.add_argument("--graph-label-field", action="store_true",
                    help="graph index built label-aware on the labels field (FilteredVamana: "
                         "graph_label_field='labels'); its collection lives in coll_graph_labels")
    args = ap.parse_args()

    rng = np.random.default_rng(3)
    base = read_fbin(args.base)
    queries_all = read_fbin(args.queries)
    n = len(base)
    rows = make_base_labels(n, rng)
    sets = label_sets(rows)
    label_graph = args.graph_label_field and args.index == "graph"
    no_codes = args.index == "ivf" and args.ivf_filter_codes == "off"
    coll_dir = os.path.join(args.dir, f"coll_{args.index}" + ("_labels" if label_graph else "")
                            + ("_nocodes" if no_codes else ""))

    def fill(col):
        for b in range(0, n, 50000):
            col.add(base[b:b + 50000], ids=np.arange(b, min(n, b + 50000)), labels=rows[b:b + 50000])

    extra = {"graph_label_field": "labels"} if label_graph else {}
    if no_codes:
        extra["ivf"] = {"filter_codes": False}
    col, build_s = open_or_build(coll_dir, args.reuse, fill, dim=base.shape[1], index=args.index,
                                 payload_index={"labels": "integer"}, **extra)
    st = col.stats()
    report = {
        "data": {"base": args.base, "queries": args.queries, "n": n, "dim": int(base.shape[1])},
        "index": args.index, "graph_label_field": "labels" if label_graph else "",
        "ivf_filter_codes": args.ivf_filter_codes if args.index == "ivf" else None,
        "threads": args.threads, "machine": "2 cores (this VM)",
        "build_seconds": build_s, "payload_index_bytes": st["payload_index_bytes"],
        "payload_index_bytes_per_vector": st["payload_index_bytes"] / n,
        "mean_labels_per_vector": float(np.mean([len(r) for r in rows])),
        "ram_bytes": st["ram_bytes"], "buckets": [],
    }
    knob, values = ("L", [50, 100, 200, 400]) if args.index == "graph" else ("nprobe", [10, 20, 40, 80])
    if args.values:
        values = [int(v) for v in args.values.split(",")]
    nq = args.nq_per_bucket
    # Searches right after a reopen run erratically for a few seconds (the
    # first measured batch of a run had come out at 0.4x the same work
    # measured next): unfiltered batches until --warmup-seconds have passed.
    warm_until = time.perf_counter() + args.warmup_seconds
    while time.perf_counter() < warm_until:
        run_queries(col, queries_all[:nq], None, args.threads, 10)
    qi = 0
    for target in BUCKETS:
        picks, spec, _, _ = choose_query_labels(sets, n, nq, target, rng)
        queries = queries_all[qi:qi + nq] if qi + nq <= len(queries_all) else queries_all[:nq]
        qi += nq
        if args.buckets and target not in [float(b) for b in args.buckets.split(",")]:
            continue
        passing = [np.array(sorted(set.intersection(*[sets[l] for l in p])), dtype=np.int64)
                   for p in picks]
        gt = truth(base, queries, passing)
        filters = [filter_of(p) for p in picks]
        bucket = {"target": target, "mean_specificity": spec, "nq": nq, "default": {},
                  "walk": [], "post_filter": [], "unfiltered": [], "exact_scan": None}
        ids, stats, secs = run_queries(col, queries, filters, args.threads, 10)
        bucket["default"] = summarise(ids, stats, secs, gt)
        if target <= 0.1:
            # The exact filtered scan: every passing point listed from the
            # payload index and ranked (graph: by code, the best re-ranked
            # from SSD; IVF: stored vectors or the bitmap walk).
            ids, stats, secs = run_queries(col, queries, filters, args.threads, 10,
                                           exact_scan_limit=n)
            bucket["exact_scan"] = summarise(ids, stats, secs, gt)
        for v in ([] if args.quick else values):
            ids, stats, secs = run_queries(col, queries, filters, args.threads, 10,
                                           exact_scan_limit=0, **{knob: v})
            bucket["walk"].append({knob: v, **summarise(ids, stats, secs, gt)})
            keep = [set(p.tolist()) for p in passing]
            kk = v if args.index == "graph" else 100
            ids, stats, secs = run_queries(col, queries, None, args.threads, kk, **{knob: v})
            bucket["post_filter"].append({knob: v, "k_prime": kk,
                                          **summarise(ids, stats, secs, gt, keep=keep)})
        for v in values[:1 if args.quick else 2]:
            # unfiltered cost: recall against the unfiltered truth is not the
            # point here, only QPS and pages
            ids, stats, secs = run_queries(col, queries, None, args.threads, 10, **{knob: v})
            s = summarise(ids, stats, secs, gt)
            s.pop("recall_at_10")
            bucket["unfiltered"].append({knob: v, **s})
        report["buckets"].append(bucket)
        print(json.dumps({"target": target, "spec": spec, "default": bucket["default"]}), flush=True)
    col.close()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    write_markdown(report, out.with_suffix(".md"), knob, " ".join(sys.argv))


def write_markdown(r, path, knob, command):
    label = " (label-aware build on 'labels')" if r.get("graph_label_field") else ""
    if r.get("ivf_filter_codes"):
        label += f" (filter codes {r['ivf_filter_codes']})"
    lines = [f"# Filtered collection search, {r['index']} index{label}, "
             f"{r['data']['n']:,} x {r['data']['dim']}",
             "",
             f"Command: `PYTHONPATH=build/release/python {command}`",
             f"Machine: {r['machine']}; {r['threads']} search threads, one query per call. "
             f"Build (add + merge): {r['build_seconds']:.0f} s. Payload index: "
             f"{r['payload_index_bytes_per_vector']:.0f} B per vector "
             f"({r['mean_labels_per_vector']:.1f} labels per vector).",
             "",
             "| bucket | specificity | mode | " + knob + " | recall@10 | QPS | p50 ms | p99 ms | pages/q | candidates/q |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for b in r["buckets"]:
        def row(mode, s, v="-"):
            lines.append(f"| {b['target']:g} | {b['mean_specificity']:.5f} | {mode} | {v} | "
                         f"{s.get('recall_at_10', float('nan')):.3f} | {s['qps']:.0f} | "
                         f"{s['p50_us'] / 1000:.2f} | {s['p99_us'] / 1000:.2f} | "
                         f"{s['pages_per_query']:.1f} | {s['candidates_per_query']:.0f} |")
        row("default", b["default"])
        if b.get("exact_scan"):
            row("exact scan", b["exact_scan"])
        for s in b["walk"]:
            row("walk", s, s[knob])
        for s in b["post_filter"]:
            row(f"post-filter k'={s['k_prime']}", s, s[knob])
        for s in b["unfiltered"]:
            row("unfiltered", s, s[knob])
    Path(path).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
