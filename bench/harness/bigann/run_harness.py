#!/usr/bin/python3
"""Run Strata through big-ann-benchmarks (NeurIPS'23 streaming and filter tracks).

    run_harness.py --track streaming --dataset random-xs --runbook simple_runbook.yaml
    run_harness.py --track streaming --dataset random-xs-clustered --runbook clustered_runbook.yaml
    run_harness.py --track filter --dataset random-filter-s
    run_harness.py --track streaming --dataset strata-synth-200k \\
        --fbin-dataset strata-synth-200k=/data/synth200k_base.fbin,/data/synth200k_query.fbin \\
        --runbook bench/harness/bigann/runbooks/synth_clustered_runbook.yaml

What it does, in a scratch directory (--work, default /tmp/strata-bigann/<track>):

1. copies the harness snapshot (--harness, $BIGANN_HARNESS, or
   ../shared/peers/big-ann-benchmarks beside the repository) to <work>/harness,
   fresh each run (the snapshot is never written);
2. lays our algorithm in as neurips23/streaming/strata/ and
   neurips23/filter/strata/ (adapter module + config.yaml; --groups keeps only
   the named run-groups of the config, --config takes another config file);
3. for a runbook of ours (a path outside the harness), copies it to
   neurips23/runbooks/ and adds its name to data_export.py's hard-coded list
   of streaming runbooks (in the copy);
4. makes the data: random-xs / random-filter-s with the harness's own
   generator (RandomDS.prepare), random-xs-clustered with make_clustered.py
   (the upstream file is a download), and --fbin-dataset NAME=BASE,QUERIES
   registers a DATASETS entry over local .fbin files (in the copy's
   benchmark/datasets.py);
5. streaming: computes each search step's ground truth (stepN.gt100, top 100)
   with the harness's benchmark/streaming/compute_gt.py -- its replay of the
   runbook over the tag -> id map -- with DiskANN's compute_groundtruth
   replaced by our numpy brute force (compute_gt.py) through its
   --gt_cmdline_tool flag;
6. runs run.py --nodocker --neurips23track <track> --algorithm strata --force
   (pinned with taskset to --cpus, default CPU 0, and niced; in the copy,
   benchmark/main.py's worker takes its definitions with a timeout instead of
   trusting Queue.empty(), which raced here and ran nothing);
7. runs data_export.py and summarize.py: mean recall per runbook as
   data_export computes it (recall@10 averaged over search steps, distance
   ties counted), recomputed step by step as a cross-check, seconds per step
   (the harness's "Step N took Xs" lines), and throughput the harness does not
   report: operations per second over the runbook, rows/s per write kind,
   queries/s for searches; for the filter track recall and QPS per query-args.

Prints the summary and writes <work>/summary.md and <work>/summary.json
(--json / --md copy them elsewhere). Exit status 0 only if every definition
produced results and the recomputed recalls match data_export's.

Needs /usr/bin/python3 with Debian's numpy, scipy, h5py, yaml, psutil,
docker, colors, requests, sklearn, pandas, matplotlib, and the strata
package on PYTHONPATH (or --strata-pythonpath).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

# Our additions to the copy's benchmark/datasets.py: a DATASETS entry over
# local .fbin files (base, queries; no ground truth file: the streaming track
# computes its own per step).
_FBIN_DATASET_CODE = '''

# ---- added by Strata's run_harness.py (in this scratch copy only) ----
class StrataFbinDS(DatasetCompetitionFormat):
    def __init__(self, name, base, queries, distance="euclidean"):
        hb = np.fromfile(base, dtype=np.uint32, count=2)
        hq = np.fromfile(queries, dtype=np.uint32, count=2)
        self.nb, self.d = int(hb[0]), int(hb[1])
        self.nq = int(hq[0])
        assert int(hq[1]) == self.d
        self.dtype = "float32"
        self._name = name
        self._distance = distance
        self.basedir = os.path.join(BASEDIR, name)
        os.makedirs(self.basedir, exist_ok=True)
        self.ds_fn = "base.fbin"
        self.qs_fn = "queries.fbin"
        self.gt_fn = None
        for src, fn in ((base, self.ds_fn), (queries, self.qs_fn)):
            dst = os.path.join(self.basedir, fn)
            if not os.path.exists(dst):
                os.symlink(os.path.abspath(src), dst)
        self.private_qs_url = None
        self.private_gt_url = None
        self.base_url = None

    def prepare(self, skip_data=False, original_size=None):
        pass

    def search_type(self):
        return "knn"

    def distance(self):
        return self._distance

    def default_count(self):
        return 10

    def __str__(self):
        return f"StrataFbin({self._name}, {self.nb})"

'''


def log(msg):
    print(f"run_harness.py: {msg}", flush=True)


def die(msg):
    print(f"run_harness.py: error: {msg}", file=sys.stderr, flush=True)
    sys.exit(2)


def default_harness():
    return os.environ.get("BIGANN_HARNESS") or os.path.join(
        REPO, "..", "shared", "peers", "big-ann-benchmarks")


def find_strata_pythonpath():
    """A directory holding strata/_strata*.so: $PYTHONPATH's, else build/*/python."""
    for d in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if d and os.path.isdir(os.path.join(d, "strata")):
            return d
    build = os.path.join(REPO, "build")
    if os.path.isdir(build):
        for sub in sorted(os.listdir(build)):
            d = os.path.join(build, sub, "python")
            if os.path.isdir(os.path.join(d, "strata")):
                return d
    return None


class Harness:
    def __init__(self, args):
        self.args = args
        self.work = os.path.abspath(args.work)
        self.h = os.path.join(self.work, "harness")
        self.py = args.python
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in [args.strata_pythonpath, env.get("PYTHONPATH", "")] if p)
        env.setdefault("STRATA_BIGANN_INDEX_DIR", os.path.join(self.work, "indices"))
        env["PYTHONUNBUFFERED"] = "1"
        self.env = env

    # ---- subprocesses ------------------------------------------------------

    def prefix(self):
        pre = []
        if self.args.nice is not None:
            pre += ["nice", "-n", str(self.args.nice)]
        if self.args.cpus:
            pre += ["taskset", "-c", self.args.cpus]
        return pre

    def run(self, cmd, logfile=None, heavy=True, check=True, timeout=None):
        full = (self.prefix() if heavy else []) + cmd
        t0 = time.time()
        if logfile:
            with open(logfile, "w") as f:
                p = subprocess.run(full, cwd=self.h, env=self.env, stdout=f,
                                   stderr=subprocess.STDOUT, timeout=timeout)
        else:
            p = subprocess.run(full, cwd=self.h, env=self.env, timeout=timeout)
        dt = time.time() - t0
        if check and p.returncode != 0:
            if logfile:
                with open(logfile) as f:
                    tail = f.read()[-4000:]
                print(tail, file=sys.stderr)
            die(f"{' '.join(cmd[:3])} ... exited {p.returncode}" + (f" (log {logfile})" if logfile else ""))
        return p.returncode, dt

    def pyrun(self, code, *argv):
        """Python code in the harness copy (its modules importable); stdout."""
        p = subprocess.run([self.py, "-c", code, *argv], cwd=self.h, env=self.env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr, file=sys.stderr)
            die("helper in the harness copy failed")
        return p.stdout

    # ---- steps -------------------------------------------------------------

    def copy(self):
        src = os.path.abspath(self.args.harness)
        if not os.path.isfile(os.path.join(src, "run.py")):
            die(f"no big-ann-benchmarks snapshot at {src} (set --harness or BIGANN_HARNESS)")
        os.makedirs(self.work, exist_ok=True)
        if os.path.exists(self.h):
            shutil.rmtree(self.h)
        shutil.copytree(src, self.h, ignore=shutil.ignore_patterns(".git", "data", "results"))
        os.chmod(self.h, os.stat(self.h).st_mode | 0o200)
        for root, dirs, files in os.walk(self.h):
            for n in dirs + files:
                p = os.path.join(root, n)
                os.chmod(p, os.stat(p).st_mode | 0o200)
        shutil.rmtree(os.path.join(self.work, "indices"), ignore_errors=True)
        log(f"harness copy: {self.h} (from {src})")

    def lay_in(self):
        a = self.args
        for track in ("streaming", "filter"):
            src = os.path.join(HERE, track, "strata")
            dst = os.path.join(self.h, "neurips23", track, "strata")
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        cfg_dst = os.path.join(self.h, "neurips23", a.track, "strata", "config.yaml")
        if a.config:
            shutil.copy(a.config, cfg_dst)
        with open(cfg_dst) as f:
            cfg = yaml.safe_load(f)
        if a.dataset not in cfg:
            # Datasets of ours: the config's "default" entry applies.
            if "default" not in cfg:
                die(f"{cfg_dst}: no entry for {a.dataset} and no default")
            cfg[a.dataset] = cfg["default"]
        if a.groups:
            keep = a.groups.split(",")
            groups = cfg[a.dataset]["strata"]["run-groups"]
            missing = [g for g in keep if g not in groups]
            if missing:
                die(f"run-groups {missing} not in the config (has {sorted(groups)})")
            cfg[a.dataset]["strata"]["run-groups"] = {g: groups[g] for g in keep}
        if a.query_args:
            for g in cfg[a.dataset]["strata"]["run-groups"].values():
                g["query-args"] = a.query_args
        cfg = {k: v for k, v in cfg.items() if k != "default"}
        with open(cfg_dst, "w") as f:
            yaml.safe_dump(cfg, f, sort_keys=False)
        self.definitions = cfg[a.dataset]["strata"]["run-groups"]

    def add_datasets(self):
        if not self.args.fbin_dataset:
            return
        path = os.path.join(self.h, "benchmark", "datasets.py")
        with open(path) as f:
            text = f.read()
        entries = []
        for spec in self.args.fbin_dataset:
            name, files = spec.split("=", 1)
            base, queries = files.split(",")
            for p in (base, queries):
                if not os.path.isfile(p):
                    die(f"--fbin-dataset {name}: no file {p}")
            entries.append(f"DATASETS[{name!r}] = lambda: StrataFbinDS({name!r}, "
                           f"{os.path.abspath(base)!r}, {os.path.abspath(queries)!r})\n")
        with open(path, "w") as f:
            f.write(text + _FBIN_DATASET_CODE + "".join(entries))

    def runbook(self):
        """The runbook path relative to the copy's root (ours copied in)."""
        a = self.args
        if not a.runbook:
            return None
        inside = os.path.join(self.h, "neurips23", "runbooks", os.path.basename(a.runbook))
        if os.path.isfile(a.runbook) and not os.path.isfile(
                os.path.join(a.harness, "neurips23", "runbooks", os.path.basename(a.runbook))):
            shutil.copy(a.runbook, inside)
        if not os.path.isfile(inside):
            die(f"no runbook {a.runbook}")
        rel = os.path.relpath(inside, self.h)
        # data_export.py scores only the streaming runbooks it lists.
        de = os.path.join(self.h, "data_export.py")
        with open(de) as f:
            text = f.read()
        anchor = "'neurips23/runbooks/simple_runbook.yaml',"
        if f"'{rel}'" not in text:
            if anchor not in text:
                die("data_export.py has no runbook list to extend")
            text = text.replace(anchor, anchor + f"\n                                    '{rel}',", 1)
            with open(de, "w") as f:
                f.write(text)
        return rel

    def fix_worker_race(self):
        """benchmark/main.py's worker loops `while not queue.empty(): queue.get()`
        on a multiprocessing.Queue filled just before the worker starts; the
        queue's feeder thread may not have flushed yet, so the worker can see
        an empty queue and exit having run nothing, with no error (it happened
        here with 7 definitions). In the copy: take definitions with a timeout
        instead, until none is left."""
        path = os.path.join(self.h, "benchmark", "main.py")
        with open(path) as f:
            text = f.read()
        old = "    while not queue.empty():\n        definition = queue.get()\n"
        new = ("    import queue as _queue\n"
               "    while True:\n"
               "        try:\n"
               "            definition = queue.get(timeout=10)\n"
               "        except _queue.Empty:\n"
               "            break\n")
        if old not in text:
            die("benchmark/main.py: worker loop not found (snapshot changed?)")
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))

    def narrow_export(self):
        """data_export.py walks every track x every DATASETS entry x (streaming)
        every listed runbook, ~1,250 look-ups and most of a minute; score only
        the track and dataset run here (the scoring code itself is untouched)."""
        if self.args.full_export:
            return
        de = os.path.join(self.h, "data_export.py")
        with open(de) as f:
            text = f.read()
        subs = [("    datasets = DATASETS.keys()\n", f"    datasets = [{self.args.dataset!r}]\n"),
                ("    neurips23tracks = ['filter', 'ood', 'sparse', 'streaming', 'none']\n",
                 f"    neurips23tracks = [{self.args.track!r}]\n")]
        for old, new in subs:
            if old not in text:
                die(f"data_export.py: no line {old.strip()!r} to narrow (use --full-export)")
            text = text.replace(old, new, 1)
        with open(de, "w") as f:
            f.write(text)

    def data(self):
        a = self.args
        ds = a.dataset
        if ds == "random-xs-clustered":
            self.run([self.py, os.path.join(HERE, "make_clustered.py")],
                     logfile=os.path.join(self.work, "make_clustered.log"))
        elif ds.startswith("random-"):
            self.run([self.py, "-c", "import sys; from benchmark.datasets import DATASETS; "
                      "DATASETS[sys.argv[1]]().prepare()", ds],
                     logfile=os.path.join(self.work, f"prepare-{ds}.log"))

    def ground_truth(self, rb):
        ds = self.args.dataset
        gtlog = os.path.join(self.work, f"gt-{ds}-{os.path.basename(rb)}.log")
        _, dt = self.run([self.py, "benchmark/streaming/compute_gt.py", "--dataset", ds,
                          "--runbook_file", rb, "--gt_cmdline_tool",
                          f"{self.py} {os.path.join(HERE, 'compute_gt.py')}"], logfile=gtlog)
        out = self.pyrun(
            "import sys\n"
            "from benchmark.datasets import DATASETS\n"
            "from benchmark.streaming.compute_gt import gt_dir\n"
            "from benchmark.streaming.load_runbook import load_runbook\n"
            "ds = DATASETS[sys.argv[1]]()\n"
            "_, rb = load_runbook(sys.argv[1], ds.nb, sys.argv[2])\n"
            "print(gt_dir(ds, sys.argv[2]), sum(e['operation'] == 'search' for e in rb))\n",
            ds, rb).split()
        gdir, want = out[0], int(out[1])
        have = len([n for n in os.listdir(os.path.join(self.h, gdir)) if n.endswith(".gt100")])
        if have != want:
            die(f"{have} stepN.gt100 files in {gdir}, the runbook has {want} searches (log {gtlog})")
        log(f"ground truth: {have} step files in {gdir} ({dt:.1f} s)")

    def harness_run(self, rb):
        a = self.args
        runlog = os.path.join(self.work, f"run-{a.dataset}-{os.path.basename(rb) if rb else 'filter'}.log")
        cmd = [self.py, "run.py", "--nodocker", "--neurips23track", a.track, "--algorithm", "strata",
               "--dataset", a.dataset, "--force"]
        if rb:
            cmd += ["--runbook_path", rb]
        if a.track != "streaming":
            cmd += ["--runs", str(a.runs)]
        log(f"run.py: {' '.join(cmd[1:])} (log {runlog})")
        # run.py's worker process does not pass a failure on: judged by the log
        # and the result files below.
        _, dt = self.run(cmd, logfile=runlog, check=False, timeout=a.timeout)
        with open(runlog) as f:
            text = f.read()
        if "Traceback" in text:
            i = text.index("Traceback")
            print(text[max(0, i - 500):i + 4000], file=sys.stderr)
            die(f"run.py raised (log {runlog})")
        log(f"run.py: {dt:.1f} s")
        return runlog, dt

    def export_and_summarize(self, rb, runlog, wall):
        a = self.args
        csv = os.path.join(self.work, "res.csv")
        self.run([self.py, "data_export.py", "--output", csv],
                 logfile=os.path.join(self.work, "data_export.log"))
        md = os.path.join(self.work, "summary.md")
        js = os.path.join(self.work, "summary.json")
        cmd = [self.py, os.path.join(HERE, "summarize.py"), "--track", a.track, "--dataset", a.dataset,
               "--csv", csv, "--log", runlog, "--out", md, "--json", js,
               "--wall", f"{wall:.3f}", "--cpus", a.cpus or "all"]
        if rb:
            cmd += ["--runbook", rb]
        if a.steps:
            cmd += ["--steps"]
        rc, _ = self.run(cmd, heavy=False, check=False)
        for src, dst in ((md, a.md), (js, a.json)):
            if dst:
                os.makedirs(os.path.dirname(os.path.abspath(dst)), exist_ok=True)
                shutil.copy(src, dst)
        return rc


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--track", choices=["streaming", "filter"], default="streaming")
    p.add_argument("--dataset", required=True, help="a DATASETS name of the harness (or --fbin-dataset)")
    p.add_argument("--runbook", help="streaming: runbook file name in neurips23/runbooks/, or a path to ours")
    p.add_argument("--config", help="config.yaml to use instead of ours for the track")
    p.add_argument("--groups", help="comma-separated run-groups of the config to run (default all)")
    p.add_argument("--query-args", help="replace every run-group's query-args (the YAML/JSON list text)")
    p.add_argument("--fbin-dataset", action="append", metavar="NAME=BASE.fbin,QUERIES.fbin",
                   help="register a dataset over local files in the harness copy")
    p.add_argument("--harness", default=default_harness())
    p.add_argument("--work", help="scratch directory (default /tmp/strata-bigann/<track>)")
    p.add_argument("--python", default="/usr/bin/python3")
    p.add_argument("--strata-pythonpath", default=None)
    p.add_argument("--cpus", default="0", help="taskset CPU list for the heavy steps ('' = none)")
    p.add_argument("--nice", type=int, default=10)
    p.add_argument("--runs", type=int, default=3, help="filter track: runs per query-args (best kept)")
    p.add_argument("--timeout", type=float, default=None, help="seconds for run.py")
    p.add_argument("--steps", action="store_true", help="print every runbook step")
    p.add_argument("--full-export", action="store_true",
                   help="let data_export.py walk every track and dataset (slow) instead of this one")
    p.add_argument("--json", help="copy summary.json here")
    p.add_argument("--md", help="copy summary.md here")
    a = p.parse_args(argv)

    if a.track == "streaming" and not a.runbook:
        die("--track streaming needs --runbook")
    a.work = a.work or os.path.join("/tmp", "strata-bigann", a.track)
    a.strata_pythonpath = a.strata_pythonpath or find_strata_pythonpath()
    if not a.strata_pythonpath:
        die("no strata package found (set PYTHONPATH or --strata-pythonpath)")

    h = Harness(a)
    t0 = time.time()
    h.copy()
    h.lay_in()
    h.add_datasets()
    rb = h.runbook() if a.track == "streaming" else None
    h.narrow_export()
    h.fix_worker_race()
    h.data()
    if rb:
        h.ground_truth(rb)
    runlog, wall = h.harness_run(rb)
    rc = h.export_and_summarize(rb, runlog, wall)
    log(f"done in {time.time() - t0:.1f} s; summary {os.path.join(h.work, 'summary.md')}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
