#!/usr/bin/env python3
"""Batch-search QPS of the Python package against `strata bench` on the same index.

usage: /usr/bin/python3 bench/scripts/python_vs_cli.py --cli build/release/tools/cli/strata
           --data DIR [--n 200000] [--dim 128] [--nq 10000] [--threads 2] [--rounds 5]
           [--out bench/results/python_vs_cli]

Generates DIR/pvc_{base,query,gt} with `strata gen` if missing, builds a graph
index (default profile) and an IVF index with `strata build`, then, for each
setting, alternates rounds of `strata bench` (one setting, --threads T, its
QPS from --json) and `strata.Index.search(queries, k=10, threads=T)` timed
around the call (arrays returned, recall computed afterwards). The first
round of each pair is a warm-up and is not counted. Reports the median QPS
of each side, their ratio, and recall of both (they must agree: same index,
same parameters, same engine). Writes OUT.json and OUT.md.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import strata


def read_ibin(path):
    with open(path, "rb") as f:
        n, k = np.fromfile(f, dtype=np.uint32, count=2)
        ids = np.fromfile(f, dtype=np.uint32, count=int(n) * int(k)).reshape(n, k)
    return ids


def read_fbin(path):
    with open(path, "rb") as f:
        n, d = np.fromfile(f, dtype=np.uint32, count=2)
        return np.fromfile(f, dtype=np.float32, count=int(n) * int(d)).reshape(n, d)


def recall_at(ids, gt, k):
    hits = 0
    for row, truth in zip(ids[:, :k], gt[:, :k]):
        hits += len(np.intersect1d(row.astype(np.int64), truth.astype(np.int64)))
    return hits / (len(gt) * k)


def run(cmd):
    print("+", " ".join(map(str, cmd)), flush=True)
    subprocess.run(list(map(str, cmd)), check=True, stdout=subprocess.DEVNULL)


def cli_round(cli, index, queries, gt, knob, value, threads):
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        flag = {"L": "--L", "nprobe": "--nprobe"}[knob]
        subprocess.run([cli, "bench", "--index", index, "--queries", queries, "--gt", gt,
                        "--k", "10", flag, str(value), "--threads", str(threads),
                        "--json", out.name], check=True, stdout=subprocess.DEVNULL)
        row = json.load(open(out.name))["rows"][0]
    return row


def py_round(index, queries, gt, knob, value, threads):
    start = time.perf_counter()
    ids, _ = index.search(queries, k=10, threads=threads, **{knob: value})
    seconds = time.perf_counter() - start
    return len(queries) / seconds, recall_at(ids, gt, 10)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--nq", type=int, default=10000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default="bench/results/python_vs_cli")
    a = ap.parse_args()

    data = Path(a.data)
    data.mkdir(parents=True, exist_ok=True)
    stem = data / "pvc"
    base, query, gt = (Path(f"{stem}_base.fbin"), Path(f"{stem}_query.fbin"),
                       Path(f"{stem}_gt.ibin"))
    if not gt.exists():
        run([a.cli, "gen", "--out", stem, "--n", a.n, "--dim", a.dim, "--queries", a.nq,
             "--metric", "l2"])
    indexes = {"graph": data / "pvc_graph", "ivf": data / "pvc_ivf"}
    for kind, path in indexes.items():
        if not path.exists() or not any(path.iterdir()):
            run([a.cli, "build", "--type", kind, "--base", base, "--index", path, "--metric", "l2"])

    queries = read_fbin(query)
    truth = read_ibin(gt)
    settings = [("graph", "L", 20), ("graph", "L", 50), ("ivf", "nprobe", 10),
                ("ivf", "nprobe", 20)]
    results = []
    for kind, knob, value in settings:
        with strata.Index.open(indexes[kind]) as index:
            cli_qps, py_qps, cli_rows, py_recalls = [], [], [], []
            for r in range(a.rounds + 1):
                row = cli_round(a.cli, indexes[kind], query, gt, knob, value, a.threads)
                qps, rec = py_round(index, queries, truth, knob, value, a.threads)
                if r == 0:
                    continue  # warm-up pair
                cli_qps.append(row["qps"])
                cli_rows.append(row)
                py_qps.append(qps)
                py_recalls.append(rec)
            entry = {
                "index": kind, knob: value, "threads": a.threads,
                "cli_qps_median": statistics.median(cli_qps),
                "python_qps_median": statistics.median(py_qps),
                "ratio": statistics.median(py_qps) / statistics.median(cli_qps),
                "cli_qps": cli_qps, "python_qps": py_qps,
                "cli_recall_at_10": cli_rows[-1]["recall_at_k"],
                "python_recall_at_10": py_recalls[-1],
                "cli_latency_p50_us": cli_rows[-1].get("p50_latency_us"),
                "cli_latency_p99_us": cli_rows[-1].get("p99_latency_us"),
                "cli_pages_per_query": cli_rows[-1].get("mean_pages_read"),
                "memory_bytes": index.memory_bytes,
            }
            print(json.dumps(entry), flush=True)
            results.append(entry)

    report = {
        "what": "batch search: strata.Index.search (Python) vs strata bench (CLI), same index",
        "data": f"strata gen {a.n} x {a.dim} clustered, {a.nq} queries, l2, k 10",
        "threads": a.threads, "rounds": a.rounds,
        "machine": f"{platform.node()} {os.cpu_count()} cores, {platform.platform()}",
        "python": sys.version.split()[0], "strata": strata.__version__,
        "results": results,
    }
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    write_markdown(report, out, a)


def write_markdown(report, out, a):
    results = report["results"]
    lines = [f"# {report['what']}", "", f"- data: {report['data']}",
             f"- {a.threads} threads both sides; {a.rounds} timed rounds, alternating CLI and "
             "Python, after one warm-up pair; medians", f"- machine: {report['machine']}", "",
             "| index | setting | CLI QPS | Python QPS | Python / CLI | recall@10 CLI | "
             "recall@10 Python | CLI p50 / p99 us | pages/query |",
             "|---|---|---|---|---|---|---|---|---|"]
    for e in results:
        knob = "L" if "L" in e else "nprobe"
        lines.append(
            f"| {e['index']} | {knob} {e[knob]} | {e['cli_qps_median']:.0f} | "
            f"{e['python_qps_median']:.0f} | {e['ratio']:.3f} | {e['cli_recall_at_10']:.4f} | "
            f"{e['python_recall_at_10']:.4f} | {e['cli_latency_p50_us']:.0f} / "
            f"{e['cli_latency_p99_us']:.0f} | {e['cli_pages_per_query']:.1f} |")
    ram = ", ".join(sorted({"%s %.1f MiB" % (e["index"], e["memory_bytes"] / 2**20)
                            for e in results}))
    lines += ["", f"Index RAM: {ram}. "
              "Every read O_DIRECT from the SSD on both sides (same index files, same "
              "engine; the Python call runs the library's batch search over `threads` "
              "workers with the GIL released). Latency and pages are the CLI's rows; the "
              "Python side returns no per-query stats. Target: Python >= 0.95x the CLI.",
              "", "Command: `PYTHONPATH=build/release/python /usr/bin/python3 "
              "bench/scripts/python_vs_cli.py --cli build/release/tools/cli/strata --data data/pvc`"]
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
