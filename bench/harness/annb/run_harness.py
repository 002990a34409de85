#!/usr/bin/python3
"""Run Strata through ann-benchmarks next to hnswlib and faiss.

usage:
  PYTHONPATH=<build>/python /usr/bin/python3 bench/harness/annb/run_harness.py \
      --dataset fashion-mnist-784-euclidean [--modes batch,single] \
      [--algorithms strata-graph,strata-ivf,hnswlib,faiss-ivf] [--out bench/results/annb]

Steps (nothing of the harness is copied into this repository):
 1. copy the harness snapshot ($ANNB_HARNESS, default
    <repo>/../shared/peers/ann-benchmarks) into --scratch (default /tmp/annb),
    leaving its files as they are, and lay our module.py + config.yml into the
    copy as ann_benchmarks/algorithms/strata/;
 2. write a definitions folder (--definitions of run.py) holding our
    config.yml and the trimmed peer entries of peer_configs.yml;
 3. link data/<dataset>.hdf5 to --data-dir (made by make_hdf5.py, which is
    run here when the file is missing);
 4. per mode: run.py --local --runs 1 --parallelism 1 [--batch] once per
    algorithm (via annb_entry.py, which registers our local dataset names);
    single-query runs get OMP_NUM_THREADS=1 (faiss) and strata threads=1;
 5. plot.py (recall vs QPS, log y; batch and single), data_export.py (CSV of
    the single-query runs, the only mode it exports), and summary.csv /
    summary.md of both modes from the harness's own metric functions.
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
ALGORITHMS = ["strata-graph", "strata-ivf", "hnswlib", "faiss-ivf"]
LOCAL_DATASETS = {  # name -> make_hdf5.py dataset key
    "fashion-mnist-784-euclidean": "fmnist",
    "glove-100-angular-wink340k": "glove100",
}


def default_harness():
    if os.environ.get("ANNB_HARNESS"):
        return os.environ["ANNB_HARNESS"]
    repo = os.environ.get("STRATA_REPO", REPO)
    return os.path.join(repo, "..", "shared", "peers", "ann-benchmarks")


def prepare_harness(harness, scratch):
    """Copy the harness into scratch (once) and (re)lay our module into it."""
    harness = os.path.abspath(harness)
    if not os.path.exists(os.path.join(harness, "run.py")):
        raise FileNotFoundError(f"no ann-benchmarks harness at {harness} (set ANNB_HARNESS)")
    if not os.path.exists(os.path.join(scratch, "run.py")):
        shutil.copytree(harness, scratch, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".git", "data", "results", "indices", "__pycache__"))
    dst = os.path.join(scratch, "ann_benchmarks", "algorithms", "strata")
    os.makedirs(dst, exist_ok=True)
    for f in ("module.py", "config.yml"):
        shutil.copyfile(os.path.join(HERE, f), os.path.join(dst, f))
    shutil.copyfile(os.path.join(HERE, "annb_entry.py"), os.path.join(scratch, "annb_entry.py"))
    return scratch


def write_definitions(scratch, strata_config=None, peers=True, name="annb_defs"):
    """A --definitions folder: strata's config (ours, or a given dict) + peers."""
    defs = os.path.join(scratch, name)
    shutil.rmtree(defs, ignore_errors=True)
    os.makedirs(os.path.join(defs, "strata"))
    if strata_config is None:
        shutil.copyfile(os.path.join(HERE, "config.yml"), os.path.join(defs, "strata", "config.yml"))
    else:
        with open(os.path.join(defs, "strata", "config.yml"), "w") as f:
            yaml.safe_dump(strata_config, f)
    if peers:
        with open(os.path.join(HERE, "peer_configs.yml")) as f:
            for key, cfg in yaml.safe_load(f).items():
                os.makedirs(os.path.join(defs, key))
                with open(os.path.join(defs, key, "config.yml"), "w") as g:
                    yaml.safe_dump(cfg, g)
    return name


def link_dataset(scratch, dataset, data_dir):
    os.makedirs(os.path.join(scratch, "data"), exist_ok=True)
    dst = os.path.join(scratch, "data", dataset + ".hdf5")
    src = os.path.join(data_dir, dataset + ".hdf5")
    if not os.path.exists(src):
        if dataset not in LOCAL_DATASETS:
            raise FileNotFoundError(f"{src} missing and no recipe for {dataset}")
        subprocess.run([sys.executable, os.path.join(HERE, "make_hdf5.py"), data_dir,
                        LOCAL_DATASETS[dataset]], check=True)
    if os.path.lexists(dst):
        os.remove(dst)
    os.symlink(os.path.abspath(src), dst)


def harness_env(single_query):
    env = os.environ.copy()
    # the harness imports strata from the built package; keep what PYTHONPATH has
    if single_query:
        env["OMP_NUM_THREADS"] = "1"  # faiss: one thread per query, like strata threads=1
    return env


def run_algorithm(scratch, dataset, algorithm, definitions, batch, runs=1, count=10,
                  force=False, timeout=None, log=None, extra_env=None):
    cmd = [sys.executable, "annb_entry.py", "run.py", "--local", "--dataset", dataset,
           "--definitions", definitions, "--algorithm", algorithm, "--runs", str(runs),
           "--parallelism", "1", "--count", str(count)]
    if batch:
        cmd.append("--batch")
    if force:
        cmd.append("--force")
    env = harness_env(not batch)
    env.update(extra_env or {})
    t0 = time.time()
    print("+ (cd %s &&" % scratch, " ".join(cmd) + ")", flush=True)
    # The harness's worker loop (main.run_worker) tests queue.empty() right
    # after the parent's put(); a multiprocessing.Queue can still look empty
    # then (its feeder thread has not flushed), and the worker exits having
    # run nothing, rc 0. Seen here about one time in five on tiny runs. Such
    # an invocation printed its "Order:" but no "Trying to instantiate": run
    # it again (nothing ran, so nothing is repeated).
    for attempt in range(5):
        proc = subprocess.run(cmd, cwd=scratch, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, timeout=timeout)
        if log:
            with open(log, "a") as lf:
                lf.write(f"$ {' '.join(cmd)}\n{proc.stdout}\n"
                         f"[rc {proc.returncode}, {time.time() - t0:.1f} s]\n")
        raced = (proc.returncode == 0 and "Order:" in proc.stdout
                 and "Trying to instantiate" not in proc.stdout)
        if not raced:
            break
        print(f"  harness worker found its queue empty (attempt {attempt + 1}); again", flush=True)
    return proc


def plot(scratch, dataset, out_png, batch):
    cmd = [sys.executable, "annb_entry.py", "plot.py", "--dataset", dataset, "-o", out_png,
           "-x", "k-nn", "-y", "qps", "-Y", "log"]
    if batch:
        cmd.append("--batch")
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=scratch, check=False)


def data_export(scratch, out_csv):
    cmd = [sys.executable, "annb_entry.py", "data_export.py", "--output", out_csv]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=scratch, check=False)


def collect(scratch, dataset, count=10):
    """Per run: algorithm, parameters, mode, recall, QPS, build s, index kB, extras.

    Uses the harness's own loaders and metric functions (in the scratch copy)."""
    import h5py
    sys.path.insert(0, scratch)
    cwd = os.getcwd()
    os.chdir(scratch)
    try:
        from ann_benchmarks.plotting.utils import compute_metrics_all_runs
        from ann_benchmarks.results import load_all_results
        rows = []
        with h5py.File(os.path.join("data", dataset + ".hdf5"), "r") as ds:
            for batch in (False, True):
                # results files are open only while the generator sits on them
                for props, f in load_all_results(dataset, count, batch):
                    ex = {k: props.get(k) for k in ("strata_memory_bytes", "strata_disk_bytes",
                                                    "build_peak_rss_bytes", "build_seconds_total")}
                    m = next(compute_metrics_all_runs(ds, [(props, f)]))
                    rows.append({"dataset": dataset, "mode": "batch" if batch else "single",
                                 "algorithm": m["algorithm"], "parameters": m["parameters"],
                                 "recall": m["k-nn"], "qps": m["qps"], "build_s": m["build"],
                                 "index_kb": m["indexsize"], "p50_ms": m["p50"], "p99_ms": m["p99"],
                                 **{k: v for k, v in ex.items()}})
        return rows
    finally:
        os.chdir(cwd)


def best_at(rows, recall):
    ok = [r for r in rows if r["recall"] >= recall]
    return max(ok, key=lambda r: r["qps"]) if ok else None


def summarize(rows, out_csv, out_md, dataset):
    rows = sorted(rows, key=lambda r: (r["mode"], r["algorithm"], r["recall"]))
    if rows:
        with open(out_csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    lines = [f"### {dataset}", "",
             "| mode | algorithm | best QPS @ recall ≥ 0.90 (params) | best QPS @ ≥ 0.95 (params) "
             "| max recall | build s | index size kB (RSS delta) | strata RAM / disk MiB |",
             "|---|---|---|---|---|---|---|---|"]
    for mode in ("batch", "single"):
        for algo in sorted({r["algorithm"] for r in rows if r["mode"] == mode}):
            rs = [r for r in rows if r["mode"] == mode and r["algorithm"] == algo]
            cells = []
            for t in (0.90, 0.95):
                b = best_at(rs, t)
                cells.append(f"{b['qps']:.0f} ({b['parameters']}, r={b['recall']:.3f})" if b else "—")
            top = max(rs, key=lambda r: r["recall"])
            builds = sorted({round(r["build_s"], 1) for r in rs})
            sizes = sorted({round(r["index_kb"]) for r in rs})
            mem = ""
            if rs[0].get("strata_memory_bytes") is not None:
                mem = "; ".join(sorted({f"{r['strata_memory_bytes'] / 2**20:.1f} / "
                                        f"{r['strata_disk_bytes'] / 2**20:.1f}" for r in rs}))
            lines.append(f"| {mode} | {algo} | {cells[0]} | {cells[1]} | {top['recall']:.4f} | "
                         f"{', '.join(map(str, builds))} | {', '.join(map(str, sizes))} | {mem} |")
    text = "\n".join(lines) + "\n"
    with open(out_md, "w") as f:
        f.write(text)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--algorithms", default=",".join(ALGORITHMS))
    ap.add_argument("--modes", default="batch,single", help="comma list of batch, single")
    ap.add_argument("--harness", default=default_harness())
    ap.add_argument("--scratch", default="/tmp/annb")
    ap.add_argument("--data-dir", default="/work/annb_data")
    ap.add_argument("--out", default=os.path.join(REPO, "bench", "results", "annb"))
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--force", action="store_true", help="re-run configurations with results")
    ap.add_argument("--timeout", type=int, default=1500, help="seconds per harness invocation")
    ap.add_argument("--report-only", action="store_true", help="only plot and summarise")
    a = ap.parse_args()

    scratch = os.path.abspath(a.scratch)
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    prepare_harness(a.harness, scratch)
    defs = write_definitions(scratch)
    link_dataset(scratch, a.dataset, a.data_dir)
    log = os.path.join(out, f"{a.dataset}.log")
    if not a.report_only:
        for mode in a.modes.split(","):
            for algo in a.algorithms.split(","):
                t0 = time.time()
                try:
                    p = run_algorithm(scratch, a.dataset, algo, defs, mode == "batch", a.runs,
                                      a.count, a.force, a.timeout, log)
                    rc = p.returncode
                except subprocess.TimeoutExpired:
                    rc = "timeout"
                print(f"  {mode} {algo}: rc {rc}, {time.time() - t0:.0f} s", flush=True)
    for mode in a.modes.split(","):
        suffix = "-batch" if mode == "batch" else ""
        plot(scratch, a.dataset, os.path.join(out, f"{a.dataset}{suffix}.png"), mode == "batch")
    data_export(scratch, os.path.join(out, "data_export_single.csv"))
    rows = collect(scratch, a.dataset, a.count)
    print(summarize(rows, os.path.join(out, f"{a.dataset}-summary.csv"),
                    os.path.join(out, f"{a.dataset}-summary.md"), a.dataset))


if __name__ == "__main__":
    main()
