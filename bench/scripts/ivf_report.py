#!/usr/bin/python3
"""Tables and plots of the IVF measurements (bench/scripts/ivf_bench.sh output).

usage: /usr/bin/python3 bench/scripts/ivf_report.py
Reads bench/results/ivf_*.json and graph_synth1m.json; writes
bench/results/ivf_pipelines_synth1m.md, ivf_summary.json and
ivf_synth1m_recall_qps.png, ivf_dm_recall_qps.png (when the inputs exist).
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


def pipeline_table(doc, out_md, target=0.9):
    rows = doc["rows"]
    lines = [
        "# IVF read pipelines at recall@10 = %.2f (seed 003 Table 1 shape)" % target,
        "",
        "Index: `%s`. Per pipeline and thread count, the smallest swept nprobe "
        "reaching the target; per-query means. issued = 4 KiB pages read; drop = page "
        "candidates pruned before a read; waste = reads whose every candidate failed the "
        "re-screen; re-rank/surv = re-ranked records / RAM-screen survivors; io-wait = share "
        "of query time blocked in Wait; drain = share after the scan; QPSx relative to naive "
        "at the same T." % doc["description"],
        "",
        "| T | pipeline | nprobe | recall@10 | QPS | QPSx | p50 us | p99 us | issued | drop | waste | re-rank/surv | io-wait | drain |",
        "|---|----------|--------|-----------|-----|------|--------|--------|--------|------|-------|--------------|---------|-------|",
    ]
    summary = []
    for t in sorted({r["threads"] for r in rows}):
        naive_qps = None
        for p in ["naive", "coalesced", "overlapped", "scheduled", "full"]:
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


def main():
    summary = {}
    pipes = load("ivf_synth1m_pipelines.json")
    if pipes:
        summary["pipelines_synth1m"] = pipeline_table(pipes, os.path.join(RES, "ivf_pipelines_synth1m.md"))
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
    ax.set_xlabel("recall@10")
    ax.set_ylabel("QPS")
    ax.set_yscale("log")
    ax.set_title("synth1m (1M x 128, L2): IVF vs graph")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(RES, "ivf_synth1m_recall_qps.png"), dpi=120)

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
        ax.set_xlabel("recall@10")
        ax.set_ylabel("QPS")
        ax.set_yscale("log")
        ax.set_title("synth200k768c (200k x 768, cosine): IVF by RAM prefix D_m")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(RES, "ivf_dm_recall_qps.png"), dpi=120)
    with open(os.path.join(RES, "ivf_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print(json.dumps(summary, indent=1)[:3000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
