// collection_memory_bench: what an opened collection costs in RAM and what
// its searches cost cold and warm, over the public API only.
//
// Opens an existing collection (--dir; never creates one), records the
// resident set right after Collection::Open against what the index says it
// holds (codes, MemGraph, node cache, slot maps: Stats().ram_bytes), then
// searches the --queries: the first batch after the open at the first --L
// ("cold": the node cache and RocksDB's block cache hold only what the open
// loaded), then every --L again ("warm"). Each row: recall@k against --gt
// (the exact k-NN of the collection's live set, user ids = row numbers of
// the base), QPS (SearchBatch with --threads), p50/p99 latency (one Search
// at a time, one thread), SSD sectors the index read per query (QueryStats)
// and block-device bytes the process read per query (/proc/self/io, which
// counts O_DIRECT reads and RocksDB's reads that missed the page cache).
//
// --repending N,M: then re-upserts ids 0..N-1 with their own base rows (the
// live set, so the ground truth, is unchanged; the ids' index copies become
// tombstones), waits for the pending graph, and sweeps again; then up to M.
//
// --merge-during S: then S seconds of search load at the first --L with
// --threads threads, and the same load while Merge() folds the pending list
// in (QPS and p50/p99 of each window).
//
// --ab-dir B: then alternates every sweep between --dir (A) and B for
// --ab-rounds rounds, rows tagged A / B (e.g. B = a copy of A with pending
// vectors: a comparison that machine drift hits alike).
//
// Memory caps: bench/scripts/collection_memory.sh runs this inside a memory
// cgroup (its limit in the row, --cgroup-limit) for seed-style cold / warm /
// capped tables; --memory-budget and --cache-mib set the collection's own
// bounds.
#include <algorithm>
#include <atomic>
#include <functional>
#include <iostream>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench_common.h"
#include "strata/collection.h"
#include "strata/dataset.h"
#include "strata/eval.h"

namespace {

using namespace strata::bench;  // NOLINT: the benchmark helpers
using json = nlohmann::json;
using strata::Collection;
using strata::CollectionSearchParams;
using strata::QueryStats;
using strata::SearchHit;

struct Config {
  std::string dir, queries, gt, json_out, dataset, cgroup_limit = "none";
  std::vector<std::uint32_t> Ls{20, 50, 100};
  std::uint32_t k = 10;
  unsigned threads = 2;
  std::uint64_t memory_budget_mib = 0;
  std::uint64_t cache_mib = 0;
  std::vector<unsigned> background_cpus;  // empty: the collection's choice
  std::size_t latency_queries = 1000;
  std::string base;                     // with repending: the collection's base rows
  std::vector<std::uint64_t> repending;  // pending counts to sweep at (cumulative)
  double merge_during_seconds = 0;       // > 0: no-merge window, then during a Merge()
  std::string ab_dir;                    // a second collection to alternate with
  unsigned ab_rounds = 3;
};

json Sweep(const Config& cfg, const Collection& c, const strata::VectorMatrix& queries,
           const strata::GroundTruth& gt, std::uint32_t L, const std::string& phase) {
  CollectionSearchParams p;
  p.index.k = cfg.k;
  p.index.list_size = std::max(L, cfg.k);
  const std::span<const float> q = queries.values<float>();
  const std::size_t nq = queries.rows();
  std::vector<QueryStats> stats;
  const std::uint64_t dev0 = DeviceReadBytes();
  const auto t0 = Clock::now();
  auto res = c.SearchBatch(q, p, cfg.threads, &stats);
  const double seconds = Seconds(t0, Clock::now());
  const std::uint64_t dev1 = DeviceReadBytes();
  if (!res.ok()) Die("search", res.status());
  double pages = 0, cache_hits = 0;
  for (const QueryStats& s : stats) {
    pages += s.pages_read;
    cache_hits += s.cache_hits;
  }
  // Latency: one query at a time on one thread.
  std::vector<double> lat;
  const std::size_t nl = std::min(cfg.latency_queries, nq);
  for (std::size_t i = 0; i < nl; ++i) {
    const auto a = Clock::now();
    auto r = c.Search(q.subspan(i * queries.dim(), queries.dim()), p);
    if (!r.ok()) Die("search", r.status());
    lat.push_back(Seconds(a, Clock::now()) * 1e3);
  }
  json j;
  j["phase"] = phase;
  j["L"] = L;
  j["k"] = cfg.k;
  j["threads"] = cfg.threads;
  j["queries"] = nq;
  j["recall"] = RecallAtK(res.value(), gt, cfg.k);
  j["qps"] = static_cast<double>(nq) / seconds;
  j["p50_ms"] = Percentile(lat, 0.5);
  j["p99_ms"] = Percentile(lat, 0.99);
  j["pages_per_query"] = pages / static_cast<double>(nq);
  j["cache_hits_per_query"] = cache_hits / static_cast<double>(nq);
  j["device_read_kib_per_query"] = static_cast<double>(dev1 - dev0) / 1024.0 / nq;
  j["rss_mib"] = static_cast<double>(RssBytes()) / (1 << 20);
  j["loadavg"] = LoadAvg();
  return j;
}

// cfg.threads threads each searching the queries in turn, one Search at a
// time, until `done()`; queries/s and per-query latencies.
struct Load {
  double qps = 0, p50_ms = 0, p99_ms = 0, seconds = 0;
  std::uint64_t queries = 0;
};
Load QueryLoad(const Config& cfg, const Collection& c, const strata::VectorMatrix& queries,
               std::uint32_t L, const std::function<bool()>& done) {
  CollectionSearchParams p;
  p.index.k = cfg.k;
  p.index.list_size = std::max(L, cfg.k);
  std::vector<std::vector<double>> lat(cfg.threads);
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < cfg.threads; ++t) {
    pool.emplace_back([&, t] {
      for (std::size_t q = t; !done(); q = (q + cfg.threads) % queries.rows()) {
        const auto a = Clock::now();
        auto r = c.Search(queries.row<float>(q), p);
        if (!r.ok()) Die("search", r.status());
        lat[t].push_back(Seconds(a, Clock::now()) * 1e3);
      }
    });
  }
  for (auto& th : pool) th.join();
  Load out;
  out.seconds = Seconds(t0, Clock::now());
  std::vector<double> all;
  for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());
  out.queries = all.size();
  out.qps = static_cast<double>(all.size()) / out.seconds;
  out.p50_ms = Percentile(all, 0.5);
  out.p99_ms = Percentile(all, 0.99);
  return out;
}

int Run(const Config& cfg) {
  strata::CollectionOptions o;
  o.create_if_missing = false;
  o.background_merge = false;
  o.memory_budget_bytes = cfg.memory_budget_mib << 20;
  o.open.cache_mib = cfg.cache_mib;
  o.background_cpus = cfg.background_cpus;
  if (cfg.merge_during_seconds > 0) {
    // The merge runs as background merges do (merge_threads 1, nice 10);
    // only the explicit Merge() starts one.
    o.background_merge = true;
    o.merge_pending_count = 1ull << 62;
  }
  const std::uint64_t rss_before = RssBytes();
  const auto t0 = Clock::now();
  auto opened = Collection::Open(cfg.dir, o);
  const double open_seconds = Seconds(t0, Clock::now());
  if (!opened.ok()) Die("open " + cfg.dir, opened.status());
  const Collection& c = **opened;
  const std::uint64_t rss_open = RssBytes();
  const strata::CollectionStats st = c.Stats();

  // Loaded after the open's measurement so they do not count in it.
  auto queries = strata::ReadVectorsAsFloat(cfg.queries);
  if (!queries.ok()) Die("queries", queries.status());
  auto gt = strata::ReadGroundTruth(cfg.gt);
  if (!gt.ok()) Die("ground truth", gt.status());
  if (queries->dim() != st.dim) {
    std::cerr << "queries have dim " << queries->dim() << ", the collection " << st.dim << "\n";
    return 1;
  }

  json head;
  head["dataset"] = cfg.dataset;
  head["dir"] = cfg.dir;
  head["cgroup_limit"] = cfg.cgroup_limit;
  head["memory_budget_mib"] = cfg.memory_budget_mib;
  head["cache_mib"] = cfg.cache_mib;
  head["nproc"] = std::thread::hardware_concurrency();
  head["live"] = st.live;
  head["indexed"] = st.indexed;
  head["pending"] = st.pending;
  head["dim"] = st.dim;
  head["index_description"] = st.index_description;
  head["open_seconds"] = open_seconds;
  head["rss_before_open_mib"] = static_cast<double>(rss_before) / (1 << 20);
  head["rss_after_open_mib"] = static_cast<double>(rss_open) / (1 << 20);
  head["rss_open_delta_mib"] = static_cast<double>(rss_open - rss_before) / (1 << 20);
  head["stats_ram_mib"] = static_cast<double>(st.ram_bytes) / (1 << 20);
  head["cached_nodes"] = st.cached_nodes;
  head["background_cpus"] = st.background_cpus;
  head["disk_mib"] = static_cast<double>(st.disk_bytes) / (1 << 20);
  std::cout << head.dump() << std::endl;

  json rows = json::array();
  rows.push_back(Sweep(cfg, c, *queries, *gt, cfg.Ls.front(), "cold"));
  std::cout << rows.back().dump() << std::endl;
  for (std::uint32_t L : cfg.Ls) {
    rows.push_back(Sweep(cfg, c, *queries, *gt, L, "warm"));
    std::cout << rows.back().dump() << std::endl;
  }
  if (!cfg.repending.empty()) {
    // Pending vectors without changing the live set (so --gt stays exact):
    // ids 0.. re-upserted with their own base rows go to the pending list,
    // and their index copies become tombstones.
    auto base = strata::ReadVectorsAsFloat(cfg.base);
    if (!base.ok()) Die("base", base.status());
    std::uint64_t done = 0;
    for (std::uint64_t target : cfg.repending) {
      if (target > base->rows() || target < done) Die("--repending", strata::Status::InvalidArgument("counts must grow and fit the base"));
      for (std::uint64_t s = done; s < target; s += 1000) {
        const std::uint64_t e = std::min(target, s + 1000);
        std::vector<strata::VectorId> ids(e - s);
        std::iota(ids.begin(), ids.end(), s);
        Check((*opened)->Upsert(ids, base->values<float>().subspan(s * st.dim, (e - s) * st.dim)),
              "re-upsert");
      }
      done = target;
      const double waited = WaitIdle();  // the pending graph's indexer caught up
      for (std::uint32_t L : cfg.Ls) {
        json j = Sweep(cfg, c, *queries, *gt, L, "pending");
        j["pending"] = c.Stats().pending;
        j["wait_idle_seconds"] = waited;
        rows.push_back(j);
        std::cout << rows.back().dump() << std::endl;
      }
    }
  }
  if (cfg.merge_during_seconds > 0) {
    // Search load with no merge for a window, then while Merge() folds the
    // pending list in on the merge thread (merge_threads 1, nice 10).
    const std::uint32_t L = cfg.Ls.front();
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(cfg.merge_during_seconds));
    const Load base = QueryLoad(cfg, c, *queries, L, [&] { return Clock::now() > until; });
    const std::uint64_t pending = c.Stats().pending;
    std::atomic<bool> merged{false};
    double merge_s = 0;
    strata::Status merge_st;
    std::thread merger([&] {
      const auto a = Clock::now();
      merge_st = (*opened)->Merge();
      merge_s = Seconds(a, Clock::now());
      merged = true;
    });
    const Load during = QueryLoad(cfg, c, *queries, L, [&] { return merged.load(); });
    merger.join();
    Check(merge_st, "merge");
    for (const Load* l : {&base, &during}) {
      json j;
      j["phase"] = l == &base ? "no_merge" : "during_merge";
      j["L"] = L;
      j["threads"] = cfg.threads;
      j["qps"] = l->qps;
      j["p50_ms"] = l->p50_ms;
      j["p99_ms"] = l->p99_ms;
      j["queries"] = l->queries;
      j["seconds"] = l->seconds;
      j["loadavg"] = LoadAvg();
      if (l == &during) {
        j["merge_seconds"] = merge_s;
        j["merged_pending"] = pending;
        j["qps_ratio"] = during.qps / base.qps;
        j["p99_ratio"] = during.p99_ms / base.p99_ms;
      }
      rows.push_back(j);
      std::cout << rows.back().dump() << std::endl;
    }
  }
  if (!cfg.ab_dir.empty()) {
    // A/B: the same sweeps alternating between this collection and another
    // (e.g. the same data with some pending vectors), so that the machine's
    // drift hits both alike.
    auto other = Collection::Open(cfg.ab_dir, o);
    if (!other.ok()) Die("open " + cfg.ab_dir, other.status());
    const double waited = WaitIdle();  // its pending graph is rebuilt at open
    head["ab_dir"] = cfg.ab_dir;
    head["ab_pending"] = (*other)->Stats().pending;
    head["ab_wait_idle_seconds"] = waited;
    for (unsigned round = 0; round < cfg.ab_rounds; ++round) {
      for (std::uint32_t L : cfg.Ls) {
        for (const Collection* which : {&c, static_cast<const Collection*>(other->get())}) {
          json j = Sweep(cfg, *which, *queries, *gt, L, which == &c ? "A" : "B");
          j["round"] = round;
          j["pending"] = which->Stats().pending;
          rows.push_back(j);
          std::cout << rows.back().dump() << std::endl;
        }
      }
    }
  }
  head["peak_rss_mib"] = PeakRssMiB();
  head["rows"] = rows;
  if (!cfg.json_out.empty()) {
    std::ofstream f(cfg.json_out);
    f << head.dump(1) << "\n";
    if (!f) {
      std::cerr << "cannot write " << cfg.json_out << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"RAM after opening a collection, and cold / warm search costs"};
  Config cfg;
  app.add_option("--dir", cfg.dir, "An existing collection directory")->required();
  app.add_option("--queries", cfg.queries, "Query vectors (any format strata reads)")->required();
  app.add_option("--gt", cfg.gt, "Exact k-NN of the live set (ids = user ids)")->required();
  app.add_option("--json", cfg.json_out, "Write the result here");
  app.add_option("--dataset", cfg.dataset, "Dataset name recorded in the result");
  app.add_option("--L", cfg.Ls, "Search list sizes")->delimiter(',');
  app.add_option("--k", cfg.k, "Neighbours");
  app.add_option("--threads", cfg.threads, "SearchBatch threads");
  app.add_option("--memory-budget", cfg.memory_budget_mib, "CollectionOptions memory budget, MiB (0 = none)");
  app.add_option("--cache-mib", cfg.cache_mib, "Node cache, MiB (0 = none)");
  app.add_option("--background-cpus", cfg.background_cpus,
                 "CPUs for merges and the indexer (default: the collection's choice)")
      ->delimiter(',');
  app.add_option("--latency-queries", cfg.latency_queries, "Queries timed one at a time");
  app.add_option("--base", cfg.base, "The base rows (ids = row numbers), for --repending");
  app.add_option("--repending", cfg.repending,
                 "After the warm sweep: re-upsert ids 0..N-1 with their own rows and sweep "
                 "again, for each N (growing)")
      ->delimiter(',');
  app.add_option("--merge-during", cfg.merge_during_seconds,
                 "After the rest: search load (first --L) for this many seconds, then while "
                 "Merge() runs");
  app.add_option("--ab-dir", cfg.ab_dir,
                 "A second collection: after the rest, sweeps alternate A (--dir) / B (this)");
  app.add_option("--ab-rounds", cfg.ab_rounds, "Rounds of the A/B alternation");
  app.add_option("--cgroup-limit", cfg.cgroup_limit, "Recorded only: the memory cgroup's limit");
  CLI11_PARSE(app, argc, argv);
  if (cfg.Ls.empty()) {
    std::cerr << "--L needs at least one value\n";
    return 2;
  }
  return Run(cfg);
}
