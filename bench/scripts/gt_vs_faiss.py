#!/usr/bin/python3
"""Times `strata gt` against faiss's exact search (IndexFlatL2) on the same
files and threads, checks that both agree, and writes a markdown table.

usage: /usr/bin/python3 bench/scripts/gt_vs_faiss.py BASE.fbin QUERY.fbin OUT.md [--k 100]
       [--threads 2] [--strata build/release/tools/cli/strata] [--repeat 2]
"""
import argparse, json, os, platform, subprocess, sys, tempfile, time
import numpy as np
import faiss


def read_fbin(path):
    with open(path, "rb") as f:
        n, d = np.fromfile(f, dtype=np.uint32, count=2)
        return np.fromfile(f, dtype=np.float32, count=int(n) * int(d)).reshape(int(n), int(d))


def read_ibin(path):
    with open(path, "rb") as f:
        nq, k = (int(x) for x in np.fromfile(f, dtype=np.uint32, count=2))
        ids = np.fromfile(f, dtype=np.uint32, count=nq * k).reshape(nq, k)
        dists = np.fromfile(f, dtype=np.float32, count=nq * k).reshape(nq, k)
    return ids, dists


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base"); ap.add_argument("query"); ap.add_argument("out")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--strata", default="build/release/tools/cli/strata")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()

    xb, xq = read_fbin(a.base), read_fbin(a.query)
    faiss.omp_set_num_threads(a.threads)
    index = faiss.IndexFlatL2(xb.shape[1])
    index.add(xb)
    faiss_times = []
    for _ in range(a.repeat):
        t = time.time()
        D, I = index.search(xq, a.k)
        faiss_times.append(time.time() - t)
    del index

    tmp = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(a.out)))
    out_ibin = os.path.join(tmp, "gt.ibin")
    strata_times = []
    for _ in range(a.repeat):
        t = time.time()
        subprocess.run([a.strata, "gt", "--base", a.base, "--queries", a.query, "--k", str(a.k),
                        "--metric", "l2", "--threads", str(a.threads), "--out", out_ibin],
                       check=True, stdout=subprocess.DEVNULL)
        strata_times.append(time.time() - t)
    ids, dists = read_ibin(out_ibin)
    os.remove(out_ibin); os.rmdir(tmp)

    # Agreement, tie-aware: a strata id counts if faiss has it in its top k, or if
    # its distance ties faiss's k-th distance (equal-distance neighbours are
    # interchangeable). Distances compared at each rank.
    hits = 0
    for q in range(I.shape[0]):
        truth = set(I[q].tolist())
        kth = D[q, -1]
        for j in range(a.k):
            if ids[q, j] in truth or abs(dists[q, j] - kth) <= 1e-5 * max(1.0, abs(kth)):
                hits += 1
    agreement = hits / (I.shape[0] * a.k)
    max_rel = float(np.max(np.abs(dists - D) / np.maximum(1.0, np.abs(D))))

    fb, sb = min(faiss_times), min(strata_times)
    loadavg = open("/proc/loadavg").read().split()[:3]
    with open(a.out, "w") as f:
        f.write("# Exact ground truth: `strata gt` vs faiss IndexFlatL2\n\n")
        f.write(f"Data: `{a.base}` ({xb.shape[0]} x {xb.shape[1]}), queries `{a.query}` "
                f"({xq.shape[0]}), k = {a.k}, L2, {a.threads} threads; machine: "
                f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}, "
                f"load average {' '.join(loadavg)} at the end. Best of {a.repeat} runs each.\n\n")
        f.write("| tool | seconds | vs faiss |\n|---|---:|---:|\n")
        f.write(f"| faiss {faiss.__version__} IndexFlatL2.search (Debian python3-faiss) | {fb:.2f} | 1.00 |\n")
        f.write(f"| strata gt (file to file, incl. reading the base and writing .ibin) | {sb:.2f} | {sb / fb:.2f} |\n\n")
        f.write(f"Agreement of the neighbour sets (tie-aware): {agreement:.6f}; largest relative "
                f"distance difference at equal rank: {max_rel:.2e}.\n\n")
        f.write(f"Command: `/usr/bin/python3 bench/scripts/gt_vs_faiss.py {a.base} {a.query} {a.out} "
                f"--k {a.k} --threads {a.threads} --strata {a.strata}`\n")
    print(json.dumps({"faiss_s": fb, "strata_s": sb, "ratio": sb / fb, "agreement": agreement,
                      "max_rel_dist_diff": max_rel}))


if __name__ == "__main__":
    main()
