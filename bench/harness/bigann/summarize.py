#!/usr/bin/python3
"""Summarise Strata's big-ann-benchmarks results (run_harness.py calls it).

Run from the root of the harness copy after run.py and data_export.py:

    summarize.py --track streaming --dataset D --runbook neurips23/runbooks/R.yaml \\
        --csv res.csv --log run.log [--out summary.md] [--json summary.json]
    summarize.py --track filter --dataset D --csv res.csv --log run.log ...

Streaming: for every result file of algorithm strata
(results/neurips23/streaming/<runbook>/<dataset>/10/strata/*.hdf5) it gives
the mean recall@k over the search steps as data_export.py wrote it to the CSV
(the leaderboard's number), recomputes it step by step from the stored
neighbours and the stepN.gt100 files with the harness's own recall function
(benchmark/plotting/metrics.py get_recall_values, distance ties counted), and
adds what the harness does not measure: seconds per step (the runner's "Step
N took Xs." lines, attributed to a replay by the adapter's "strata replay:
<name>" line), operations per second over the whole runbook (rows inserted,
deleted and replaced plus queries searched, over the sum of step times),
rows/s per write kind and queries/s of the search steps.

Filter: recall@k and QPS (queries / best of the runs' batch times) per
query-args, from the CSV, with the recall recomputed from the result file.

Exit status 1 when a definition has no result, a run's replay has no step
lines, or a recomputed mean differs from the CSV's by more than 1e-6.
"""

import argparse
import csv
import json
import os
import re
import sys

import h5py
import numpy as np

sys.path.insert(0, os.getcwd())

from benchmark.dataset_io import knn_result_read  # noqa: E402
from benchmark.datasets import DATASETS  # noqa: E402
from benchmark.plotting.metrics import get_recall_values  # noqa: E402
from benchmark.results import get_result_filename  # noqa: E402


def read_csv(path):
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("algorithm") == "strata":
                out[(row["dataset"], row["parameters"])] = row
    return out


def parse_log(path):
    """{replay name: [seconds of step 1, 2, ...]} from run.py's output."""
    replays, current = {}, None
    step_re = re.compile(r"^Step (\d+) took ([0-9.eE+-]+)s\.")
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("strata replay: "):
                current = line[len("strata replay: "):]
                replays[current] = []
                continue
            m = step_re.match(line)
            if m and current is not None:
                replays[current].append(float(m.group(2)))
    return replays


def rate(rows, seconds):
    return rows / seconds if seconds > 0 else None


def attr_str(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def result_files(root):
    if not os.path.isdir(root):
        return []
    return [os.path.join(root, fn) for fn in sorted(os.listdir(root)) if fn.endswith(".hdf5")]


def summarize_streaming(dataset_name, runbook_path, exported, step_times):
    from benchmark.streaming.compute_gt import gt_dir
    from benchmark.streaming.load_runbook import load_runbook

    ds = DATASETS[dataset_name]()
    _, runbook = load_runbook(dataset_name, ds.nb, runbook_path)
    gdir = gt_dir(ds, runbook_path)
    search_steps = [i + 1 for i, e in enumerate(runbook) if e["operation"] == "search"]
    gts = {s: knn_result_read(os.path.join(gdir, f"step{s}.gt100")) for s in search_steps}
    rbname = os.path.basename(runbook_path)
    root = os.path.join(get_result_filename(dataset_name, 10, neurips23track="streaming",
                                            runbook_path=runbook_path), "strata")
    runs, problems = [], []
    for path in result_files(root):
        with h5py.File(path, "r") as f:
            attrs = dict(f.attrs)
            name = attr_str(attrs["name"])
            k = int(attrs["count"])
            times = step_times.get(name)
            if times is None or len(times) != len(runbook):
                problems.append(f"{name}: {0 if times is None else len(times)} step times in the log, "
                                f"runbook has {len(runbook)} steps")
                times = (times or []) + [None] * (len(runbook) - len(times or []))
            steps, recalls = [], []
            for i, entry in enumerate(runbook):
                op = entry["operation"]
                if op == "search":
                    rows = int(ds.nq)
                elif op == "replace":
                    rows = entry["tags_end"] - entry["tags_start"]
                else:
                    rows = entry["end"] - entry["start"]
                rec = {"step": i + 1, "op": op, "rows": rows, "seconds": times[i]}
                if op == "search":
                    run_nn = np.array(f["neighbors_step" + str(i + 1)])
                    mean, _, _, _ = get_recall_values(gts[i + 1], run_nn, k)
                    rec["recall"] = float(mean)
                    recalls.append(float(mean))
                steps.append(rec)
        timed = [s for s in steps if s["seconds"] is not None]
        total = sum(s["seconds"] for s in timed)

        def agg(kinds):
            sel = [s for s in timed if s["op"] in kinds]
            rows = sum(s["rows"] for s in sel)
            secs = sum(s["seconds"] for s in sel)
            return {"steps": len(sel), "rows": rows, "seconds": secs, "per_second": rate(rows, secs)}

        row = exported.get((f"{dataset_name}({rbname})", name))
        de = float(row["recall/ap"]) if row else None
        mean = float(np.mean(recalls)) if recalls else None
        if de is None:
            problems.append(f"{name}: not in data_export's CSV")
        elif mean is None or abs(de - mean) > 1e-6:
            problems.append(f"{name}: data_export {de} != recomputed {mean}")
        ops = agg({"insert", "delete", "replace", "search"})
        runs.append({
            "track": "streaming", "dataset": dataset_name, "runbook": rbname,
            "parameters": name, "file": path, "count": k,
            "mean_recall_data_export": de, "mean_recall": mean,
            "min_step_recall": float(np.min(recalls)) if recalls else None,
            "steps": steps, "total_seconds": total,
            "mean_step_seconds": total / len(timed) if timed else None,
            "operations": ops["rows"], "ops_per_second": ops["per_second"],
            "search": agg({"search"}), "insert": agg({"insert"}),
            "delete": agg({"delete"}), "replace": agg({"replace"}),
            "index": {key[len("strata_"):]: (v.item() if hasattr(v, "item") else attr_str(v))
                      for key, v in attrs.items() if key.startswith("strata_") and key != "strata_ops"},
        })
    if not runs:
        problems.append(f"no result files under {root}")
    return runs, problems


def summarize_filter(dataset_name, exported):
    ds = DATASETS[dataset_name]()
    true_nn = ds.get_groundtruth()
    root = os.path.join(get_result_filename(dataset_name, 10, neurips23track="filter"), "strata")
    runs, problems = [], []
    for path in result_files(root):
        with h5py.File(path, "r") as f:
            attrs = dict(f.attrs)
            name = attr_str(attrs["name"])
            k = int(attrs["count"])
            run_nn = np.array(f["neighbors"])
            best = float(attrs["best_search_time"])
            times = [float(t) for t in attrs.get("search_times", [])]
            mean, _, _, _ = get_recall_values(true_nn, run_nn, k)
        row = exported.get((dataset_name, name))
        de = float(row["recall/ap"]) if row else None
        qps_de = float(row["qps"]) if row and row.get("qps") else None
        if de is None:
            problems.append(f"{name}: not in data_export's CSV")
        elif abs(de - float(mean)) > 1e-6:
            problems.append(f"{name}: data_export {de} != recomputed {mean}")
        runs.append({
            "track": "filter", "dataset": dataset_name, "parameters": name, "file": path,
            "count": k, "recall_data_export": de, "recall": float(mean),
            "qps_data_export": qps_de, "qps": ds.nq / best if best > 0 else None,
            "best_search_seconds": best, "search_times": times,
            "index": {key[len("strata_"):]: (v.item() if hasattr(v, "item") else attr_str(v))
                      for key, v in attrs.items() if key.startswith("strata_")},
        })
    if not runs:
        problems.append(f"no result files under {root}")
    return runs, problems


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--track", choices=["streaming", "filter"], required=True)
    p.add_argument("--dataset", required=True)
    p.add_argument("--runbook")
    p.add_argument("--csv", required=True, help="data_export.py output")
    p.add_argument("--log", required=True, help="run.py's output")
    p.add_argument("--out", help="write the Markdown summary here too")
    p.add_argument("--json", help="write every number here")
    p.add_argument("--wall", type=float, help="run.py's wall seconds (recorded)")
    p.add_argument("--cpus", default="", help="CPUs the run was pinned to (recorded)")
    p.add_argument("--steps", action="store_true", help="print every step")
    a = p.parse_args()

    exported = read_csv(a.csv)
    lines = []
    if a.track == "streaming":
        runs, problems = summarize_streaming(a.dataset, a.runbook, exported, parse_log(a.log))
        lines.append(f"### {os.path.basename(a.runbook)} on {a.dataset} (CPUs {a.cpus})\n")
        lines.append("| parameters | mean recall@10 (data_export) | recomputed | min step recall | steps "
                     "| total s | mean s/step | ops/s | insert rows/s | delete rows/s | search QPS | merges |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in runs:
            lines.append(
                f"| `{r['parameters']}` | {fmt(r['mean_recall_data_export'], '.4f')} "
                f"| {fmt(r['mean_recall'], '.4f')} | {fmt(r['min_step_recall'], '.4f')} "
                f"| {len(r['steps'])} | {r['total_seconds']:.2f} | {fmt(r['mean_step_seconds'], '.3f')} "
                f"| {fmt(r['ops_per_second'], '.0f')} | {fmt(r['insert']['per_second'], '.0f')} "
                f"| {fmt(r['delete']['per_second'], '.0f')} | {fmt(r['search']['per_second'], '.0f')} "
                f"| {r['index'].get('merges', '-')} |")
        lines.append("")
        if a.steps:
            for r in runs:
                lines.append(f"`{r['parameters']}` per step:\n")
                lines.append("| step | op | rows | seconds | recall@10 |")
                lines.append("|---|---|---|---|---|")
                for s in r["steps"]:
                    lines.append(f"| {s['step']} | {s['op']} | {s['rows']} | {fmt(s['seconds'], '.4f')} "
                                 f"| {fmt(s.get('recall'), '.4f')} |")
                lines.append("")
    else:
        runs, problems = summarize_filter(a.dataset, exported)
        lines.append(f"### filter track, {a.dataset} (CPUs {a.cpus})\n")
        lines.append("| parameters | recall@10 (data_export) | recomputed | QPS (data_export) | QPS | best batch s |")
        lines.append("|---|---|---|---|---|---|")
        for r in sorted(runs, key=lambda r: r["recall"]):
            lines.append(f"| `{r['parameters']}` | {fmt(r['recall_data_export'], '.4f')} | {r['recall']:.4f} "
                         f"| {fmt(r['qps_data_export'], '.0f')} | {fmt(r['qps'], '.0f')} "
                         f"| {r['best_search_seconds']:.4f} |")
        lines.append("")
    for msg in problems:
        lines.append(f"PROBLEM: {msg}")
    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"track": a.track, "dataset": a.dataset, "runbook": a.runbook, "cpus": a.cpus,
                       "run_py_wall_seconds": a.wall, "runs": runs, "problems": problems}, f, indent=1)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
