// collection_bench: end-to-end benchmark of the Collection
// (include/strata/collection.h) over the public API only.
//
// Scenarios (--scenario, comma-separated; "all" = every one):
//   inserts    fresh collections (graph, flat_threshold, background_merge off):
//              batch upserts (--batch per call) -> vectors/s, single upserts
//              (one id per call) -> p50/p99 ms, for durability sync/async and
//              each --writers thread count; the threshold build is reported
//              apart as "first build wait".
//   pending    N_merged vectors + Merge(), then 2,000 pending, then N_pending
//              pending (no merge): recall@k vs exact ground truth of the live
//              set, QPS (SearchBatch, --threads), p50/p99 (one thread, one
//              Search per query) at each --L; then Merge() and again.
//   merge_qps  search QPS/p99 with no merge running vs while a Merge() runs
//              on another thread (queries loop until it ends). Run with
//              `pending` it uses that collection's final merge.
//   deletes    delete --delete-frac of the ids, Merge(), disk bytes and
//              recall vs a fresh collection built from only the live set.
//   merge_time a collection of --mt-n vectors built by one Merge (one-pass
//              build), then --mt-new-frac new vectors upserted and
//              --mt-del-frac of the ids deleted; the directory is copied and
//              Merge() is timed on one copy with streaming_merge=true (the
//              StreamingMerge of Singh et al., FreshDiskANN) and on the other
//              with streaming_merge=false (full rebuild of the same live set);
//              recall@k after each.
//   live_build --lb-n vectors upserted in batches of --batch into an empty
//              collection with background_merge=true (default merge policy),
//              then WaitForMerge + Merge(); total time, merges, recall, vs a
//              one-pass build (one Merge) of the same vectors.
//
// One-pass builds: the collection is opened with flat_threshold above N so
// no index exists while loading, and the single Merge() builds the first
// index of the whole set. Before a timed Merge or a search sweep with pending
// vectors the driver waits until the process is idle (CPU time of the whole
// process grows < 0.05 s in 1 s, twice in a row): the pending-graph indexer
// thread has then caught up (there is no public counter for it).
//
// Every result row carries the dataset, N, dim, parameters, threads, machine
// (nproc, load average), peak RSS so far (getrusage) and Stats().ram_bytes.
//
// This file holds the command line and the scenario dispatch; the scenarios
// are in collection_bench_{inserts,pending,merges}.cc, what they share in
// collection_bench_util.{h,cc} and bench_common.h.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "collection_bench_scenarios.h"

int main(int argc, char** argv) {
  using namespace strata::bench;  // NOLINT: the benchmark's own helpers
  Config cfg;
  CLI::App app{"End-to-end benchmark of the Collection (inserts, pending, merge_qps, deletes)"};
  app.add_option("--base", cfg.base, "Base vectors (any format strata reads)")->required();
  app.add_option("--queries", cfg.queries, "Query vectors")->required();
  app.add_option("--dir", cfg.dir, "Scratch directory for collections")->required();
  app.add_option("--json", cfg.json_out, "Write all result rows here");
  app.add_option("--scenario", cfg.scenarios,
                 "inserts,pending,merge_qps,deletes,merge_time,live_build or all");
  app.add_option("--dataset", cfg.dataset, "Dataset name recorded in results (default: --base)");
  app.add_option("--n-merged", cfg.n_merged, "Vectors merged before the pending inserts");
  app.add_option("--n-pending", cfg.n_pending, "Pending vectors (large case)");
  app.add_option("--n-small-pending", cfg.n_small_pending, "Pending vectors (small case)");
  app.add_option("--insert-batch-vectors", cfg.insert_batch_vectors, "Vectors per batch config");
  app.add_option("--insert-singles", cfg.insert_singles, "Single upserts per config");
  app.add_option("--singles-max-seconds", cfg.singles_max_seconds, "Cap on singles per config");
  app.add_option("--batch", cfg.batch, "Vectors per batch upsert");
  app.add_option("--writers", cfg.writers, "Writer thread counts")->delimiter(',');
  app.add_option("--durability", cfg.durabilities, "sync,async")->delimiter(',');
  app.add_option("--L", cfg.Ls, "Search list sizes (graph) or nprobe (ivf)")->delimiter(',');
  app.add_option("--index-type", cfg.index_type, "Collections' index type: graph or ivf")
      ->check(CLI::IsMember({"graph", "ivf"}));
  app.add_option("--k", cfg.k, "Neighbours");
  app.add_option("--threads", cfg.threads, "Search threads");
  app.add_option("--build-threads", cfg.build_threads,
                 "merge_threads of loading merges (0 = nproc)");
  app.add_option("--nomerge-seconds", cfg.nomerge_seconds, "merge_qps baseline duration");
  app.add_option("--delete-frac", cfg.delete_frac, "Fraction of ids deleted");
  app.add_option("--mt-n", cfg.mt_n, "merge_time: vectors in the one-pass build");
  app.add_option("--mt-new-frac", cfg.mt_new_frac, "merge_time: new vectors, fraction of N");
  app.add_option("--mt-del-frac", cfg.mt_del_frac, "merge_time: deleted ids, fraction of N");
  app.add_option("--mt-rebuild", cfg.mt_rebuild,
                 "merge_time: also time a full rebuild on a copy of the directory");
  app.add_option("--flat-threshold", cfg.flat_threshold,
                 "flat_threshold of the collections that are not one-pass built");
  app.add_option("--lb-n", cfg.lb_n, "live_build: vectors (0 = all base rows)");
  app.add_option("--lb-merge-threads", cfg.lb_merge_threads,
                 "live_build: merge_threads of the background merges (0 = nproc)");
  app.add_option("--lb-throttle", cfg.lb_throttle,
                 "live_build: the writer waits for a running merge after each batch");
  app.add_option("--lb-one-pass", cfg.lb_one_pass, "live_build: also the one-pass build");
  app.add_option("--wait-idle", cfg.wait_idle, "pending: wait for the indexer before sweeps");
  CLI11_PARSE(app, argc, argv);
  if (cfg.dataset.empty()) cfg.dataset = cfg.base;

  auto has = [&](const std::string& s) {
    if (cfg.scenarios == "all") return true;
    std::stringstream ss(cfg.scenarios);
    std::string t;
    while (std::getline(ss, t, ',')) {
      if (t == s) return true;
    }
    return false;
  };
  Data d;
  auto b = strata::ReadVectorsAsFloat(cfg.base);
  if (!b.ok()) Die("read " + cfg.base, b.status());
  auto q = strata::ReadVectorsAsFloat(cfg.queries);
  if (!q.ok()) Die("read " + cfg.queries, q.status());
  d.base = std::move(b.value());
  d.queries = std::move(q.value());
  d.dim = d.base.dim();
  if (d.queries.dim() != d.dim) {
    std::cerr << "dimension mismatch\n";
    return 1;
  }
  std::filesystem::create_directories(cfg.dir);

  json all;
  all["tool"] = "collection_bench";
  all["args"] = std::vector<std::string>(argv, argv + argc);
  all["dataset"] = cfg.dataset;
  all["base_rows"] = d.base.rows();
  all["dim"] = d.dim;
  all["nproc"] = std::thread::hardware_concurrency();
  all["loadavg_start"] = LoadAvg();
  auto save = [&] {
    all["loadavg_end"] = LoadAvg();
    all["peak_rss_mib"] = PeakRssMiB();
    if (!cfg.json_out.empty()) std::ofstream(cfg.json_out) << all.dump(2) << "\n";
  };
  SetResultSink(&all, save);
  if (has("merge_time")) RunMergeTime(cfg, d);
  if (has("inserts")) {
    all["inserts"] = RunInserts(cfg, d);
    save();
  }
  if (has("pending") || has("merge_qps") || has("deletes")) {
    json mq, del;
    json p = RunPending(cfg, d, has("pending"), has("merge_qps"), has("deletes"), &mq, &del);
    all["pending"] = p;
    if (has("merge_qps")) all["merge_qps"] = mq;
    if (has("deletes")) all["deletes"] = del;
    save();
  }
  if (has("live_build")) RunLiveBuild(cfg, d);
  save();
  return 0;
}
