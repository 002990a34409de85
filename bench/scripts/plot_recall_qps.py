#!/usr/bin/python3
"""Plots recall@k against QPS and pages/query from `strata bench` JSON files.

usage: plot_recall_qps.py OUT.png FILE.json [FILE.json ...] [--title T]

Each JSON is either an ablation (`strata bench --ablation --json`: rows carry a
"config") or a plain sweep (`strata bench --json`: one curve per file, named by
the file, per thread count). One column per thread count: QPS (log scale) on
top, pages per query below.
"""
import json
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def curves(paths):
    out = defaultdict(list)  # (name, threads) -> rows
    for path in paths:
        doc = json.load(open(path))
        for row in doc["rows"]:
            if "recall_at_k" not in row:
                continue
            name = row.get("config")
            if name is None:
                name = path.rsplit("/", 1)[-1].removesuffix(".json")
                if row.get("index_type") == "ivf":
                    name += " " + row.get("pipeline", "")
            out[(name, row["threads"])].append(row)
    return out


def main(argv):
    title = None
    if "--title" in argv:
        i = argv.index("--title")
        title = argv[i + 1]
        del argv[i:i + 2]
    out_png, paths = argv[1], argv[2:]
    data = curves(paths)
    threads = sorted({t for _, t in data})
    # 20 distinct colours: an ablation has 15 configurations.
    plt.rcParams["axes.prop_cycle"] = plt.cycler(color=plt.get_cmap("tab20").colors)
    fig, axes = plt.subplots(2, len(threads), figsize=(6.5 * len(threads), 9), squeeze=False)
    for col, t in enumerate(threads):
        for (name, tt), rows in sorted(data.items()):
            if tt != t:
                continue
            rows = sorted(rows, key=lambda r: r["recall_at_k"])
            rec = [r["recall_at_k"] for r in rows]
            style = "-o" if name in ("baseline", "default") else "-."
            axes[0][col].plot(rec, [r["qps"] for r in rows], style, ms=3, label=name)
            axes[1][col].plot(rec, [r["mean_pages_read"] for r in rows], style, ms=3, label=name)
        axes[0][col].set_yscale("log")
        axes[0][col].set_title(f"{title + ', ' if title else ''}{t} thread{'s' if t > 1 else ''}")
        axes[0][col].set_ylabel("QPS")
        axes[1][col].set_ylabel("pages read per query")
        for ax in (axes[0][col], axes[1][col]):
            ax.set_xlabel("recall@10")
            ax.grid(True, alpha=0.3)
            ax.axvline(0.90, color="grey", lw=0.6)
            ax.axvline(0.95, color="grey", lw=0.6)
        axes[1][col].set_yscale("log")
    axes[0][0].legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)
    print("wrote", out_png)


if __name__ == "__main__":
    main(sys.argv)
