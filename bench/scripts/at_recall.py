#!/usr/bin/python3
"""QPS, pages/query and latency at given recall targets, interpolated linearly
between the sweep points of `strata bench --json` files (graph or IVF).

usage: at_recall.py FILE.json [FILE.json ...] [--targets 0.9,0.95]
Prints a markdown table: file, threads, target, QPS, pages/q, mean latency.
"""
import json
import sys
from collections import defaultdict


def at(rows, target):
    rows = sorted(rows, key=lambda r: r["recall_at_k"])
    for i, r in enumerate(rows):
        if r["recall_at_k"] >= target:
            if i == 0:
                return r["qps"], r["mean_pages_read"], r["mean_latency_us"], r["recall_at_k"]
            a = rows[i - 1]
            t = (target - a["recall_at_k"]) / (r["recall_at_k"] - a["recall_at_k"])
            lerp = lambda k: a[k] + t * (r[k] - a[k])  # noqa: E731
            return lerp("qps"), lerp("mean_pages_read"), lerp("mean_latency_us"), target
    return None


def main(argv):
    targets = [0.9, 0.95]
    if "--targets" in argv:
        i = argv.index("--targets")
        targets = [float(x) for x in argv[i + 1].split(",")]
        del argv[i:i + 2]
    print("| file | config | T | recall | QPS | pages/q | mean µs |")
    print("|---|---|---|---|---|---|---|")
    for path in argv[1:]:
        doc = json.load(open(path))
        groups = defaultdict(list)
        for r in doc["rows"]:
            key = (r.get("config") or r.get("pipeline") or "", r["threads"])
            groups[key].append(r)
        for (config, t), rows in groups.items():
            for target in targets:
                v = at(rows, target)
                name = path.rsplit("/", 1)[-1]
                if v is None:
                    print(f"| {name} | {config} | {t} | {target:.2f} | not reached | | |")
                else:
                    print(f"| {name} | {config} | {t} | {target:.2f} | {v[0]:.0f} | {v[1]:.1f} | {v[2]:.0f} |")


if __name__ == "__main__":
    main(sys.argv)
