#!/usr/bin/python3
"""Summarise Strata's big-ann-benchmarks streaming results.

Run from the root of the harness copy after run.py and data_export.py:

    summarize.py --csv res.csv --out summary.md --json summary.json \
        DATASET:RUNBOOK_PATH ...

For every result file of algorithm strata (results/neurips23/streaming/
<runbook>/<dataset>/10/strata/*.hdf5) it prints the mean recall@k over the
search steps as data_export.py wrote it to the CSV, recomputes it step by step
from the stored neighbours and the stepN.gt100 files with the harness's own
recall function (benchmark/plotting/metrics.py, distance ties counted), and
adds what the harness does not measure: seconds per runbook step and
throughput (search: queries/s, insert/delete/replace: rows/s), from the
adapter's per-call timings (the strata_ops attribute). Exit status 1 when a
runbook has no result or a recomputed mean differs from the CSV's.
"""

import argparse
import csv
import json
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.getcwd())

from benchmark.dataset_io import knn_result_read  # noqa: E402
from benchmark.datasets import DATASETS  # noqa: E402
from benchmark.plotting.metrics import get_recall_values  # noqa: E402
from benchmark.results import get_result_filename  # noqa: E402
from benchmark.streaming.compute_gt import gt_dir  # noqa: E402
from benchmark.streaming.load_runbook import load_runbook  # noqa: E402


def parse_ops(text):
    ops = []
    for item in (text or "").split():
        parts = item.split(":")
        ops.append({"op": parts[0], "rows": int(parts[1]), "seconds": float(parts[2]),
                    "missing": int(parts[3]) if len(parts) > 3 else 0})
    return ops


def csv_recalls(path):
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row.get("algorithm") != "strata":
                continue
            try:
                out[(row["dataset"], row["parameters"])] = float(row["recall/ap"])
            except (KeyError, ValueError):
                pass
    return out


def rate(rows, seconds):
    return rows / seconds if seconds > 0 else float("inf")


def summarize_run(dataset_name, runbook_path, count=10):
    ds = DATASETS[dataset_name]()
    _, runbook = load_runbook(dataset_name, ds.nb, runbook_path)
    gdir = gt_dir(ds, runbook_path)
    search_steps = [i + 1 for i, e in enumerate(runbook) if e["operation"] == "search"]
    gts = {s: knn_result_read(os.path.join(gdir, f"step{s}.gt100")) for s in search_steps}
    root = os.path.join(get_result_filename(dataset_name, count, neurips23track="streaming",
                                            runbook_path=runbook_path), "strata")
    runs = []
    if not os.path.isdir(root):
        return runs
    for fn in sorted(os.listdir(root)):
        if not fn.endswith(".hdf5"):
            continue
        with h5py.File(os.path.join(root, fn), "r") as f:
            attrs = dict(f.attrs)
            name = attrs["name"].decode() if isinstance(attrs["name"], bytes) else str(attrs["name"])
            k = int(attrs["count"])
            ops = parse_ops(attrs.get("strata_ops", ""))
            steps = []
            recalls = []
            for i, entry in enumerate(runbook):
                step = i + 1
                rec = {"step": step, "op": entry["operation"]}
                if i < len(ops):
                    rec.update(rows=ops[i]["rows"], seconds=ops[i]["seconds"])
                if entry["operation"] == "search":
                    run_nn = np.array(f["neighbors_step" + str(step)])
                    mean, _, _, _ = get_recall_values(gts[step], run_nn, k)
                    rec["recall"] = float(mean)
                    if i < len(ops):
                        rec["missing"] = ops[i]["missing"]
                    recalls.append(float(mean))
                steps.append(rec)
        timed = [s for s in steps if "seconds" in s]
        total = sum(s["seconds"] for s in timed)

        def agg(kind):
            sel = [s for s in timed if s["op"] == kind]
            rows = sum(s["rows"] for s in sel)
            secs = sum(s["seconds"] for s in sel)
            return {"steps": len(sel), "rows": rows, "seconds": secs,
                    "per_second": rate(rows, secs) if sel else None}

        runs.append({
            "dataset": dataset_name,
            "runbook": os.path.basename(runbook_path),
            "parameters": name,
            "file": os.path.join(root, fn),
            "count": k,
            "mean_recall": float(np.mean(recalls)) if recalls else None,
            "min_recall": float(np.min(recalls)) if recalls else None,
            "steps": steps,
            "timed_steps": len(timed),
            "total_seconds": total,
            "mean_step_seconds": total / len(timed) if timed else None,
            "search": agg("search"),
            "insert": agg("insert"),
            "delete": agg("delete"),
            "replace": agg("replace"),
            "index": {key[len("strata_"):]: (v.item() if hasattr(v, "item") else v)
                      for key, v in attrs.items()
                      if key.startswith("strata_") and key != "strata_ops"},
        })
    return runs


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("runs", nargs="+", help="DATASET:RUNBOOK_PATH")
    p.add_argument("--csv", help="data_export.py output")
    p.add_argument("--out", help="write the Markdown summary here too")
    p.add_argument("--json", help="write every number here")
    p.add_argument("--steps", action="store_true", help="print every step")
    a = p.parse_args()

    exported = csv_recalls(a.csv)
    all_runs, lines, ok = [], [], True
    for spec in a.runs:
        dataset_name, runbook_path = spec.split(":", 1)
        runs = summarize_run(dataset_name, runbook_path)
        rb = os.path.basename(runbook_path)
        lines.append(f"### {rb} on {dataset_name}\n")
        if not runs:
            lines.append("no results\n")
            ok = False
            continue
        lines.append("| parameters | mean recall@10 (data_export) | mean recall@10 (recomputed) | min step recall "
                     "| steps | total s | mean s/step | search QPS | insert rows/s | delete rows/s | merges |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in runs:
            key = (f"{dataset_name}({rb})", r["parameters"])
            r["data_export_recall"] = exported.get(key)
            if r["data_export_recall"] is not None and r["mean_recall"] is not None and \
                    abs(r["data_export_recall"] - r["mean_recall"]) > 1e-6:
                print(f"summarize.py: {key}: data_export {r['data_export_recall']} != "
                      f"recomputed {r['mean_recall']}", file=sys.stderr)
                ok = False
            lines.append(
                f"| `{r['parameters']}` | {fmt(r['data_export_recall'], '.4f')} | {fmt(r['mean_recall'], '.4f')} "
                f"| {fmt(r['min_recall'], '.4f')} | {r['timed_steps']} | {r['total_seconds']:.3f} "
                f"| {fmt(r['mean_step_seconds'], '.4f')} | {fmt(r['search']['per_second'], '.0f')} "
                f"| {fmt(r['insert']['per_second'], '.0f')} | {fmt(r['delete']['per_second'], '.0f')} "
                f"| {r['index'].get('merges', '-')} |")
        lines.append("")
        if a.steps:
            for r in runs:
                lines.append(f"`{r['parameters']}` per step:\n")
                lines.append("| step | op | rows | seconds | recall@10 |")
                lines.append("|---|---|---|---|---|")
                for s in r["steps"]:
                    lines.append(f"| {s['step']} | {s['op']} | {s.get('rows', '-')} "
                                 f"| {fmt(s.get('seconds'), '.4f')} | {fmt(s.get('recall'), '.4f')} |")
                lines.append("")
        all_runs.extend(runs)

    text = "\n".join(lines)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(all_runs, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
