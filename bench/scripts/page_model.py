#!/usr/bin/python3
"""Checks OctopusANN's page-read model against an ablation run.

usage: page_model.py ABLATION.json SHUFFLED_INDEX_DIR [L ...]

OctopusANN ("I/O Optimizations for Graph-Based Disk-Resident ANN Search: A
Design Space Exploration", eq. 1): pages/query = O(R * H / (OR(G) * n_p)), with
R the average out-degree, H the hops, n_p records per page and OR(G) the
overlap ratio. For each configuration on the shuffled layout with page search,
and for the baseline (where OR ~ 0 and every expanded node costs one page:
pages = W * H), prints measured pages next to the prediction with one constant
fitted on C1 at the first L, so the table shows how well the model's shape
holds across L and configurations. Markdown on stdout.
"""
import json
import sys


def main(argv):
    doc = json.load(open(argv[1]))
    manifest = json.load(open(argv[2] + "/manifest.json"))
    build = manifest["build"]
    avg_degree = build["average_degree"]
    overlap = build["overlap_ratio"]
    # records per page from the description ("5 records/sector").
    desc = doc["shuffled"]
    n_p = int(desc.split(" records/sector")[0].rsplit(" ", 1)[-1])
    wanted = [int(x) for x in argv[3:]] or None
    rows = [r for r in doc["rows"] if r["threads"] == 1 and (wanted is None or r["L"] in wanted)]
    print(f"R = {avg_degree:.1f} (average out-degree), OR(G) = {overlap:.3f}, n_p = {n_p}\n")
    c = None
    for r in rows:
        if r["config"].startswith("C1"):
            c = r["mean_pages_read"] / (avg_degree * r["mean_hops"] / (overlap * n_p))
            break
    print("| config | L | hops H | pages measured | model R·H/(OR·n_p) × c | ratio | W·H (no locality) |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        h = r["mean_hops"]
        model = c * avg_degree * h / (overlap * n_p) if c else float("nan")
        ps = r["config"] in ("C1 PS+PSe", "C3 MemG+PS+PSe", "C5 MemG+PS+PSe+DW") or r["config"].startswith("default")
        print(f"| {r['config']} | {r['L']} | {h:.1f} | {r['mean_pages_read']:.1f} | "
              f"{model if ps else float('nan'):.1f} | "
              f"{(r['mean_pages_read'] / model) if ps else float('nan'):.2f} | "
              f"{r['beamwidth'] * h:.1f} |")
    print(f"\nc = {c:.4f} (fitted on C1 at its first L)" if c else "")


if __name__ == "__main__":
    main(sys.argv)
