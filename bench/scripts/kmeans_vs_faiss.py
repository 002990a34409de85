#!/usr/bin/python3
"""Strata k-means vs faiss k-means, same sample, same threads, same iterations.

Both train on one random sample of the corpus, written once to a .fbin, so
neither subsamples further: 262,144 rows = faiss's 256 points per centroid at
k = 1,024 = Strata's 128 MiB bound at d = 128. Both start from random sample
rows. Each side's final centroids are scored with the same faiss exact search
(sum of squared distances of the sample to the nearest centroid).
Strata seeds with k-means++ on 8 k rows by default (--init random matches
faiss's seeding).

usage: kmeans_vs_faiss.py [--base PATH.fbin] [--k 1024] [--iters 10]
                          [--threads 2] [--sample 262144] [--runs 1]
                          [--bench build-pq/bench/micro/quant_pq_bench]
Run with /usr/bin/python3 (numpy + faiss). If --base is missing, a clustered
1M x 128 corpus is generated with /work/shared/bench-data/gen_synth.py's
recipe (numpy only, no ground truth).
"""
import argparse, json, os, shutil, subprocess, sys, tempfile, time
import numpy as np


def read_fbin(path):
    n, d = np.fromfile(path, dtype=np.uint32, count=2)
    return np.memmap(path, dtype=np.float32, mode="r", offset=8, shape=(int(n), int(d)))


def write_fbin(path, x):
    with open(path, "wb") as f:
        np.array(x.shape, dtype=np.uint32).tofile(f)
        np.ascontiguousarray(x, dtype=np.float32).tofile(f)


def synth(n, d, seed=7):
    # gen_synth.py's recipe: latent 32, C = n/500 clusters, Zipf-ish sizes.
    rng = np.random.default_rng(seed)
    C, m = max(16, n // 500), 32
    A = (rng.standard_normal((m, d)) / np.sqrt(m)).astype(np.float32)
    centers = (rng.standard_normal((C, m)) * 2.0).astype(np.float32)
    sig = rng.uniform(0.4, 1.2, C).astype(np.float32)
    w = 1.0 / np.arange(1, C + 1) ** 0.6
    rng.shuffle(w)
    c = rng.choice(C, size=n, p=w / w.sum())
    z = centers[c] + rng.standard_normal((n, m)).astype(np.float32) * sig[c, None]
    return (z @ A + 0.15 * rng.standard_normal((n, d))).astype(np.float32)


def objective(x, centroids, faiss):
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(np.ascontiguousarray(centroids, dtype=np.float32))
    D, _ = index.search(x, 1)
    return float(D.astype(np.float64).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "../../data/synth1m_base.fbin"))
    ap.add_argument("--k", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--sample", type=int, default=262144)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--init", default="kmeans++", choices=["kmeans++", "random"],
                    help="Strata's seeding (faiss always starts from random rows)")
    ap.add_argument("--bench", default=os.path.join(os.path.dirname(__file__),
                                                    "../../build-pq/bench/micro/quant_pq_bench"))
    a = ap.parse_args()

    # Thread counts must be fixed before faiss/OpenBLAS start their pools.
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    os.environ["OPENBLAS_NUM_THREADS"] = str(a.threads)
    import faiss
    faiss.omp_set_num_threads(a.threads)

    if os.path.exists(a.base):
        base = read_fbin(a.base)
    else:
        print(f"{a.base} missing: generating 1M x 128 clustered data", file=sys.stderr)
        base = synth(1000000, 128)
    n, d = base.shape
    rng = np.random.default_rng(a.seed)
    rows = np.sort(rng.choice(n, size=min(a.sample, n), replace=False))
    x = np.ascontiguousarray(base[rows], dtype=np.float32)

    tmp = tempfile.mkdtemp(prefix="kmeans_vs_faiss_")
    sample_path = os.path.join(tmp, "sample.fbin")
    cent_path = os.path.join(tmp, "strata_centroids.fbin")
    write_fbin(sample_path, x)

    results = {"strata": [], "faiss": []}
    for run in range(a.runs):
        # Strata: the sample fits the 128 MiB bound, so it trains on all of it.
        cmd = [a.bench, f"--kmeans_fbin={sample_path}", f"--kmeans_k={a.k}",
               f"--kmeans_iters={a.iters}", f"--kmeans_threads={a.threads}",
               f"--kmeans_seed={a.seed}", f"--kmeans_out={cent_path}",
               f"--kmeans_max_sample_bytes={x.nbytes}", f"--kmeans_init={a.init}"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        c = read_fbin(cent_path)
        results["strata"].append({"seconds": r["seconds"], "last_iter_obj": r["objective"][-1],
                                  "final_obj": objective(x, c, faiss),
                                  "repaired": r["repaired"]})

        km = faiss.Kmeans(d, a.k, niter=a.iters, seed=a.seed, verbose=False,
                          max_points_per_centroid=256)
        t = time.perf_counter()
        km.train(x)
        secs = time.perf_counter() - t
        results["faiss"].append({"seconds": secs, "last_iter_obj": float(km.obj[-1]),
                                 "final_obj": objective(x, km.centroids, faiss)})

    print(f"sample {x.shape[0]} x {d} of {n} rows, k={a.k}, iters={a.iters}, "
          f"threads={a.threads}, runs={a.runs}, strata init={a.init}")
    print("| impl | best time (s) | all runs (s) | objective at last iteration | "
          "final objective (exact) |")
    print("|---|---|---|---|---|")
    for name in ("strata", "faiss"):
        rs = results[name]
        times = [r["seconds"] for r in rs]
        print(f"| {name} | {min(times):.2f} | {', '.join(f'{t:.2f}' for t in times)} | "
              f"{rs[-1]['last_iter_obj']:.6g} | {rs[-1]['final_obj']:.6g} |")
    print(json.dumps(results))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
