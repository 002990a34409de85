#!/usr/bin/python3
"""Tables and plots of the IVF measurements (bench/scripts/ivf_bench.sh output).

usage: /usr/bin/python3 bench/scripts/ivf_report.py
Reads bench/results/ivf_*.json, graph_synth1m.json and
graph_default_synth1m_ivfrun.json; writes bench/results/ivf_pipelines_synth1m.md,
ivf_vs_graph_synth1m.md, ivf_summary.json and ivf_synth1m_recall_qps.png,
ivf_vs_graph_synth1m.png, ivf_dm_recall_qps.png (when the inputs exist).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

RES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results")


def load(name):
    path = os.path.join(RES, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def first_reaching(rows, target, key):
    """Smallest swept knob (rows sorted by it) whose recall reaches target."""
    ok = [r for r in rows if r["recall_at_k"] >= target]
    return min(ok, key=lambda r: r[key]) if ok else None


def curve(rows, threads, pipeline=None):
    sel = [r for r in rows if r["threads"] == threads and (pipeline is None or r.get("pipeline") == pipeline)]
    return sorted(sel, key=lambda r: r["recall_at_k"])


def finish_plot(fig, ax, title, path, log_qps=False):
    """Axes labels, grid and legend of a recall-QPS plot, saved as PNG."""
    ax.set_xlabel("recall@10")
    ax.set_ylabel("QPS")
    if log_qps:
        ax.set_yscale("log")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def interpolate(rows, target, key):
    """Linear interpolation of `key` at recall `target` over rows sorted by recall."""
    rows = sorted(rows, key=lambda r: r["recall_at_k"])
    for a, b in zip(rows, rows[1:]):
        if a["recall_at_k"] <= target <= b["recall_at_k"] and b["recall_at_k"] > a["recall_at_k"]:
            f = (target - a["recall_at_k"]) / (b["recall_at_k"] - a["recall_at_k"])
            return a[key] + f * (b[key] - a[key])
    return None


def pipeline_table(doc, out_md, target=0.9, seed_doc=None):
    rows = doc["rows"] + [dict(r, pipeline=r["pipeline"] + " (seed)") for r in (seed_doc or {}).get("rows", [])]
    lines = [
        "# IVF read pipelines at recall@10 = %.2f (RaBitQ-SSD Table 1 shape)" % target,
        "",
        "Index: `%s`. Per pipeline and thread count, the smallest swept nprobe "
        "reaching the target; per-query means. issued = 4 KiB pages read; drop = page "
        "candidates pruned before a read; waste = reads whose every candidate failed the "
        "re-screen; re-rank/surv = re-ranked records / RAM-screen survivors; io-wait = share "
        "of query time blocked in Wait; drain = share after the scan; QPSx relative to naive "
        "at the same T. \"(seed)\" rows: the scheduled designs as RaBitQ-SSD has them "
        "(`--fill-first false`: all Q slots filled before a dist_k exists)." % doc["description"],
        "",
        "| T | pipeline | nprobe | recall@10 | QPS | QPSx | p50 us | p99 us | issued | drop | waste | re-rank/surv | io-wait | drain |",
        "|---|----------|--------|-----------|-----|------|--------|--------|--------|------|-------|--------------|---------|-------|",
    ]
    summary = []
    for t in sorted({r["threads"] for r in rows}):
        naive_qps = None
        for p in ["naive", "coalesced", "overlapped", "scheduled (seed)", "full (seed)",
                  "scheduled", "full"]:
            sel = [r for r in rows if r["threads"] == t and r["pipeline"] == p]
            best = first_reaching(sel, target, "nprobe")
            if best is None:
                lines.append("| %d | %s | - | not reached | | | | | | | | | | |" % (t, p))
                continue
            if p == "naive":
                naive_qps = best["qps"]
            rel = best["qps"] / naive_qps if naive_qps else float("nan")
            lines.append(
                "| %d | %s | %d | %.4f | %.0f | %.2f | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f / %.0f | %.0f%% | %.0f%% |"
                % (t, p, best["nprobe"], best["recall_at_k"], best["qps"], rel, best["p50_latency_us"],
                   best["p99_latency_us"], best["mean_pages_read"], best["mean_pages_dropped"],
                   best["mean_wasted_reads"], best["mean_reranked"], best["mean_survivors"],
                   100 * best["io_wait_share"], 100 * best["drain_share"]))
            summary.append({"threads": t, "pipeline": p, **{k: best[k] for k in (
                "nprobe", "recall_at_k", "qps", "p50_latency_us", "p99_latency_us", "mean_pages_read",
                "mean_pages_dropped", "mean_wasted_reads", "mean_reranked", "mean_survivors",
                "io_wait_share", "drain_share")}})
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    return summary


def vs_graph(ivf_docs, graph, out_md, out_png):
    """IVF configurations against the graph default measured in the same period."""
    lines = ["# IVF vs the graph index's default composition on synth1m (same period)", "",
             "Graph: `%s` (`graph_default_synth1m_ivfrun.json`). Pages and QPS at recall@10 "
             "0.90 and 0.95, interpolated linearly between swept points; ratio = IVF / graph." % graph["description"], "",
             "| index | T | pages @0.90 | ratio | QPS @0.90 | ratio | pages @0.95 | ratio | QPS @0.95 | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    out = {}
    for t in (1, 2):
        g = curve(graph["rows"], t)
        ax.plot([r["recall_at_k"] for r in g], [r["qps"] for r in g], "x--",
                label="graph default, T=%d" % t, alpha=1.0 if t == 2 else 0.5)
        gp = {x: interpolate(g, x, "mean_pages_read") for x in (0.9, 0.95)}
        gq = {x: interpolate(g, x, "qps") for x in (0.9, 0.95)}
        lines.append("| graph default | %d | %.1f | | %.0f | | %.1f | | %.0f | |" % (t, gp[0.9], gq[0.9], gp[0.95], gq[0.95]))
        for label, doc in ivf_docs:
            c = curve(doc["rows"], t)
            if not c:
                continue
            if t == 2 or label.startswith("IVF default"):
                ax.plot([r["recall_at_k"] for r in c], [r["qps"] for r in c], "o-",
                        label="%s, T=%d" % (label, t), alpha=1.0 if t == 2 else 0.5)
            cells = []
            for x in (0.9, 0.95):
                p, q = interpolate(c, x, "mean_pages_read"), interpolate(c, x, "qps")
                if p is None:
                    cells += ["-", "", "-", ""]
                    continue
                cells += ["%.1f" % p, "%.2fx" % (p / gp[x]), "%.0f" % q, "%.2fx" % (q / gq[x])]
                out["%s T%d @%.2f" % (label, t, x)] = {"pages": p, "qps": q, "pages_ratio": p / gp[x], "qps_ratio": q / gq[x]}
            lines.append("| %s | %d | %s |" % (label, t, " | ".join(cells)))
    finish_plot(fig, ax, "synth1m: IVF vs graph default (same period)", out_png)
    with open(out_md, "w") as f:
        f.write("\n".join(lines) + "\n")
    return out


def main():
    summary = {}
    pipes = load("ivf_synth1m_pipelines.json")
    if pipes:
        summary["pipelines_synth1m"] = pipeline_table(pipes, os.path.join(RES, "ivf_pipelines_synth1m.md"),
                                                      seed_doc=load("ivf_synth1m_pipelines_seed.json"))
    gdef = load("graph_default_synth1m_ivfrun.json")
    if gdef:
        docs = [(label, load(tag)) for label, tag in [
            ("IVF default (locality, fill first)", "ivf_synth1m.json"),
            ("IVF centroid order", "ivf_synth1m_centroid.json"),
            ("IVF D_m = D/2", "ivf_synth1m_dm64.json")]]
        summary["vs_graph_default"] = vs_graph([d for d in docs if d[1]], gdef,
                                               os.path.join(RES, "ivf_vs_graph_synth1m.md"),
                                               os.path.join(RES, "ivf_vs_graph_synth1m.png"))
    graph = load("graph_synth1m.json")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for tag, label, style in [("ivf_synth1m.json", "IVF Split-RaBitQ (full)", "o-"),
                              ("ivf_synth1m_dm64.json", "IVF D_m = D/2 (full)", "^-"),
                              ("ivf_synth1m_raw.json", "IVF raw rerank (full)", "s-")]:
        doc = load(tag)
        if not doc:
            continue
        for t in (1, 2):
            c = curve(doc["rows"], t)
            if c:
                ax.plot([r["recall_at_k"] for r in c], [r["qps"] for r in c], style,
                        label="%s, T=%d" % (label, t), alpha=1.0 if t == 2 else 0.5)
        key = tag.replace(".json", "")
        summary[key] = {"description": doc["description"], "memory_bytes": doc["index_memory_bytes"],
                        "disk_bytes": doc["index_disk_bytes"],
                        "at_0.90": {str(t): first_reaching(curve(doc["rows"], t), 0.9, "nprobe") for t in (1, 2)}}
    if graph:
        for t in (1, 2):
            c = curve(graph["rows"], t)
            ax.plot([r["recall_at_k"] for r in c], [r["qps"] for r in c], "x--",
                    label="graph (graph_synth1m.json), T=%d" % t, alpha=1.0 if t == 2 else 0.5)
        summary["graph_synth1m"] = {"description": graph["description"],
                                    "disk_bytes": graph.get("index_disk_bytes"),
                                    "at_0.90": {str(t): first_reaching(curve(graph["rows"], t), 0.9, "L") for t in (1, 2)}}
    finish_plot(fig, ax, "synth1m (1M x 128, L2): IVF vs graph", os.path.join(RES, "ivf_synth1m_recall_qps.png"),
                log_qps=True)

    # D_m sweep on the 768-d set.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    any_dm = False
    for dm in (192, 384, 576, 768):
        doc = load("ivf_synth200k768c_dm%d.json" % dm)
        if not doc:
            continue
        any_dm = True
        for t in (1, 2):
            c = curve(doc["rows"], t)
            ax.plot([r["recall_at_k"] for r in c], [r["qps"] for r in c], "o-" if t == 2 else "o:",
                    label="D_m = %d, T=%d" % (dm, t))
        summary["synth200k768c_dm%d" % dm] = {
            "description": doc["description"], "memory_bytes": doc["index_memory_bytes"],
            "disk_bytes": doc["index_disk_bytes"],
            "at_0.90": {str(t): first_reaching(curve(doc["rows"], t), 0.9, "nprobe") for t in (1, 2)}}
    if any_dm:
        finish_plot(fig, ax, "synth200k768c (200k x 768, cosine): IVF by RAM prefix D_m",
                    os.path.join(RES, "ivf_dm_recall_qps.png"), log_qps=True)
    with open(os.path.join(RES, "ivf_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1)[:3000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
