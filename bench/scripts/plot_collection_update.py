#!/usr/bin/python3
"""Plots a collection_update_bench run over time, one line per mode, in the
shape of NAVIS's concurrent search-and-insert figures: search QPS and p99
latency per one-second window of the write phase, and recall@10 per tenth of
the writes against the exact ground truth of the live set.

usage: plot_collection_update.py OUT.png FILE.json [FILE.json ...] [--title T]

Modes from several files are told apart by the file's name when they repeat.
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def runs(paths):
    out = []
    names = set()
    for path in paths:
        doc = json.load(open(path))
        stem = path.rsplit("/", 1)[-1].removesuffix(".json")
        for mode in doc["modes"]:
            name = mode["mode"]
            if mode["mode"] == "in_place":
                name += f" ({doc['config']['in_place_threads']} applier)"
            if name in names:
                name += f" [{stem}]"
            names.add(name)
            out.append((name, mode))
    return out


def main():
    ap = argparse.ArgumentParser(description="collection_update_bench runs over time")
    ap.add_argument("out", help="PNG to write")
    ap.add_argument("runs", nargs="+", help="collection_update_bench JSON files")
    ap.add_argument("--title")
    a = ap.parse_args()
    title, out, paths = a.title, a.out, a.runs
    fig, (qps, p99, rec) = plt.subplots(3, 1, figsize=(8, 9), sharex=False)
    for name, mode in runs(paths):
        w = mode["windows"]
        t = [x["t"] for x in w]
        line = qps.plot(t, [x["qps"] for x in w], label=name, linewidth=0.8)[0]
        qps.axhline(mode["search_only_before"]["qps"], color=line.get_color(), linestyle=":",
                    linewidth=0.8)
        p99.plot(t, [x["p99_ms"] for x in w], label=name, linewidth=0.8, color=line.get_color())
        writes = mode["writes"]
        span = writes["indexed_seconds"]
        tenths = mode["recall_during"]
        total = max(1, len(tenths))
        rec.plot([span * (i + 0.5) / total for i in range(len(tenths))],
                 [x["recall_at_10"] for x in tenths], marker="o", label=name,
                 color=line.get_color())
    qps.set_ylabel("search QPS (1 s windows)\ndotted: search only")
    p99.set_ylabel("p99 latency (ms)")
    p99.set_yscale("log")
    rec.set_ylabel("recall@10 (live set)")
    rec.set_xlabel("seconds since the writes began (until the index holds them all)")
    for ax in (qps, p99, rec):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
