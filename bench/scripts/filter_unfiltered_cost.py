#!/usr/bin/python3
"""What a payload index costs searches that give no filter.

usage: PYTHONPATH=build/release/python /usr/bin/python3 bench/scripts/filter_unfiltered_cost.py
           --base B.fbin --queries Q.fbin --dir SCRATCH [--index ivf|graph] [--rounds 5]
           [--out bench/results/filter_unfiltered_cost_synth200k_ivf]

Builds two collections over the same vectors and labels (as
filter_collection_bench.py draws them): one with the field "labels" declared
in payload_index, one without (the labels only stored). Then runs the same
unfiltered batch (all queries, 2 threads) on each, alternating, `--rounds`
times, and reports the median QPS, mean pages per query and RAM of each.
Writes OUT.json and OUT.md.
"""

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from filter_collection_bench import read_fbin  # noqa: E402
from filter_labels_bench import make_base_labels  # noqa: E402

import strata  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--index", choices=["graph", "ivf"], default="ivf")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    base, queries = read_fbin(a.base), read_fbin(a.queries)
    rows = make_base_labels(len(base), np.random.default_rng(3))
    cols = {}
    for name, fields in (("indexed", {"labels": "integer"}), ("plain", {})):
        path = Path(a.dir) / f"cost_{a.index}_{name}"
        shutil.rmtree(path, ignore_errors=True)
        col = strata.Collection(str(path), dim=base.shape[1], index=a.index,
                                payload_index=fields, background_merge=False)
        for b in range(0, len(base), 50000):
            col.add(base[b:b + 50000], ids=np.arange(b, min(len(base), b + 50000)),
                    labels=rows[b:b + 50000])
        col.merge()
        cols[name] = col
    knob = {"L": 50} if a.index == "graph" else {"nprobe": 20}
    runs = {name: [] for name in cols}
    pages = {}
    for name, col in cols.items():  # warm-up
        col.search(queries, k=10, threads=2, **knob)
    for _ in range(a.rounds):
        for name, col in cols.items():
            t = time.perf_counter()
            _, _, st = col.search(queries, k=10, threads=2, return_stats=True, **knob)
            runs[name].append(len(queries) / (time.perf_counter() - t))
            pages[name] = float(np.mean(st["pages_read"]))
    report = {"data": a.base, "n": len(base), "index": a.index, "params": knob, "threads": 2,
              "rounds": a.rounds, "machine": "2 cores (this VM)", "collections": {}}
    for name, col in cols.items():
        s = col.stats()
        report["collections"][name] = {
            "median_qps": statistics.median(runs[name]), "qps_rounds": runs[name],
            "mean_pages": pages[name], "ram_bytes": s["ram_bytes"],
            "payload_index_bytes": s["payload_index_bytes"]}
        col.close()
    c = report["collections"]
    report["qps_ratio_indexed_over_plain"] = c["indexed"]["median_qps"] / c["plain"]["median_qps"]
    out = Path(a.out)
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    lines = [f"# Unfiltered search with and without a payload index ({a.index}, {len(base):,} x "
             f"{base.shape[1]})", "",
             f"Command: `PYTHONPATH=build/release/python {' '.join(sys.argv)}`", "",
             f"{len(queries)} queries per batch, k 10, {knob}, 2 threads, medians of {a.rounds} "
             "alternating rounds, 2-core VM.", "",
             "| collection | median QPS | pages/query | RAM | payload index |", "|---|---|---|---|---|"]
    for name, r in c.items():
        lines.append(f"| {name} | {r['median_qps']:.0f} | {r['mean_pages']:.1f} | "
                     f"{r['ram_bytes'] / 2**20:.1f} MiB | {r['payload_index_bytes'] / 2**20:.1f} MiB |")
    lines += ["", f"QPS ratio indexed / plain: {report['qps_ratio_indexed_over_plain']:.3f}"]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
