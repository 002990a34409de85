#!/usr/bin/python3
"""Prints a markdown table from run_search_bench.sh's results directory
(rounds interleave in-process and server runs; each row is the median over
rounds, with min-max).
usage: summarize.py RESULTS_DIR"""
import glob
import json
import os
import re
import statistics
import sys

d = sys.argv[1]


def load(pattern):
    return [json.loads(open(f).read()) for f in sorted(glob.glob(os.path.join(d, pattern)))]


def span(xs):
    return f"{statistics.median(xs):.0f} ({min(xs):.0f}–{max(xs):.0f})"


recall = json.load(open(os.path.join(d, "inprocess_recall.json"))).get("recall_at_k")
plain = [r["qps"] for r in load("inprocess_threads2_rep*.json")]
payload = [r["qps"] for r in load("inprocess_payload_threads2_rep*.json")]
base = statistics.median(plain)
print(f"recall@10 (k=10, L=50, 1000 queries): {recall:.4f}\n")
print("| run | rounds | QPS median (min–max) | vs in-process | p50 ms | p90 ms | p99 ms | non-2xx |")
print("|---|---|---|---|---|---|---|---|")
print(f"| in-process `collection search`, 2 threads | {len(plain)} | {span(plain)} | 1.00 | | | | |")
print(f"| in-process, 2 threads, `--with-payload` | {len(payload)} | {span(payload)} | "
      f"{statistics.median(payload) / base:.2f} | | | | |")
cfgs = sorted({tuple(map(int, re.search(r"wrk_threads(\d+)_c(\d+)_", f).groups()))
               for f in glob.glob(os.path.join(d, "wrk_threads*_c*_rep*.json"))})
for t, c in cfgs:
    runs = load(f"wrk_threads{t}_c{c}_rep*.json")
    q = [r["qps"] for r in runs]
    med = lambda k: statistics.median(r[k] for r in runs)
    print(f"| server, {t} workers; wrk 1 thread × {c} connections | {len(runs)} | {span(q)} | "
          f"{statistics.median(q) / base:.2f} | {med('p50_ms'):.2f} | {med('p90_ms'):.2f} | "
          f"{med('p99_ms'):.2f} | {sum(r['non_2xx'] for r in runs)} |")
