// collection_bench's pending, merge_qps and deletes scenarios, which share
// one loaded collection: search quality and speed with vectors pending (not
// yet merged into the index), search while a Merge() runs, and deletes
// against a fresh collection of only the live set.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <random>
#include <thread>
#include <vector>

#include "collection_bench_scenarios.h"

namespace strata::bench {
namespace {

// `threads` workers each call Search() over the queries cyclically until
// `stop` says so; returns {queries done, seconds, latencies ms}.
struct LoadResult {
  std::uint64_t done = 0;
  double seconds = 0;
  std::vector<double> lat;
};
template <typename Stop>
LoadResult QueryLoad(const Config& cfg, const Data& d, const Collection& c, std::uint32_t L,
                     Stop stop) {
  const CollectionSearchParams p = Params(cfg, L);
  std::vector<std::vector<double>> lat(cfg.threads);
  std::atomic<std::uint64_t> next{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < cfg.threads; ++t) {
    pool.emplace_back([&, t] {
      while (!stop()) {
        const std::uint64_t q = next.fetch_add(1) % d.queries.rows();
        const auto a = Clock::now();
        auto r = c.Search(d.queries.row<float>(q), p);
        lat[t].push_back(Seconds(a, Clock::now()) * 1e3);
        if (!r.ok()) Die("search", r.status());
      }
    });
  }
  for (auto& th : pool) th.join();
  LoadResult out;
  out.seconds = Seconds(t0, Clock::now());
  for (auto& v : lat) out.lat.insert(out.lat.end(), v.begin(), v.end());
  out.done = out.lat.size();
  return out;
}

json MergeQps(const Config& cfg, const Data& d, Collection& c) {
  json rows = json::array();
  const std::uint32_t L = cfg.Ls[cfg.Ls.size() / 2];
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(cfg.nomerge_seconds));
  LoadResult base = QueryLoad(cfg, d, c, L, [&] { return Clock::now() > until; });
  json jb = Common(cfg, d, &c);
  jb["phase"] = "no_merge";
  const CollectionStats before = c.Stats();
  std::atomic<bool> merge_done{false};
  double merge_s = 0;
  Status merge_st;
  std::thread merger([&] {
    const auto a = Clock::now();
    merge_st = c.Merge();
    merge_s = Seconds(a, Clock::now());
    merge_done = true;
  });
  LoadResult during = QueryLoad(cfg, d, c, L, [&] { return merge_done.load(); });
  merger.join();
  Check(merge_st, "merge");
  json jd = Common(cfg, d, &c);
  jd["phase"] = "during_merge";
  jd["merge_seconds"] = merge_s;
  jd["merge_live"] = before.live;
  jd["merge_pending_before"] = before.pending;
  for (auto* pr : {&base, &during}) {
    json& j = pr == &base ? jb : jd;
    j["scenario"] = "merge_qps";
    j["k"] = cfg.k;
    j["L"] = L;
    j["threads"] = cfg.threads;
    j["queries_done"] = pr->done;
    j["seconds"] = pr->seconds;
    j["qps"] = pr->done / pr->seconds;
    j["p50_ms"] = Percentile(pr->lat, 0.5);
    j["p99_ms"] = Percentile(pr->lat, 0.99);
    AppendRow(rows, j);
  }
  rows[1]["qps_ratio"] = rows[1]["qps"].get<double>() / rows[0]["qps"].get<double>();
  rows[1]["p99_ratio"] = rows[1]["p99_ms"].get<double>() / rows[0]["p99_ms"].get<double>();
  return rows;
}

// The pending rows of one case: the sweep's rows tagged with the case, the
// live count n and how many of them are pending.
json TagPending(json rows, const std::string& name, std::uint64_t n, std::uint64_t pend) {
  for (auto& r : rows) {
    r["scenario"] = "pending";
    r["case"] = name;
    r["n"] = n;
    r["n_pending"] = pend;
  }
  return rows;
}

// deletes: deletes --delete-frac of the n_total ids of `c` (in `dir`), sweeps
// before and after a Merge(), then builds a fresh collection of only the live
// set and sweeps it. Closes `c` and removes both directories. Returns the rows.
json Deletes(const Config& cfg, const Data& d, std::unique_ptr<Collection> c,
             const std::string& dir, std::uint64_t n_total) {
  json rows = json::array();
  std::vector<VectorId> all = Prefix(n_total);
  std::mt19937_64 rng(42);
  std::shuffle(all.begin(), all.end(), rng);
  const std::size_t nd = static_cast<std::size_t>(cfg.delete_frac * n_total);
  std::vector<VectorId> del(all.begin(), all.begin() + nd);
  std::vector<VectorId> live(all.begin() + nd, all.end());
  std::sort(del.begin(), del.end());
  std::sort(live.begin(), live.end());
  const std::uint64_t disk_before = c->Stats().disk_bytes;
  const auto t0 = Clock::now();
  auto dr = c->Delete(del);
  if (!dr.ok()) Die("delete", dr.status());
  const double del_s = Seconds(t0, Clock::now());
  const auto gt_live = ExactGt(cfg, d, live);
  json pre =
      TagPending(SearchSweep(cfg, d, *c, gt_live, "deleted_unmerged"), "deletes", live.size(), 0);
  const double merge_s = TimedMerge(*c, "merge");
  json post =
      TagPending(SearchSweep(cfg, d, *c, gt_live, "deleted_merged"), "deletes", live.size(), 0);
  json summary = Common(cfg, d, c.get());
  summary["phase"] = "deleted_merged_summary";
  summary["deleted"] = dr.value();
  summary["delete_seconds"] = del_s;
  summary["merge_seconds"] = merge_s;
  summary["disk_bytes_before_delete"] = disk_before;
  // Fresh collection from only the live set.
  Check(c->Close(), "close");
  c.reset();
  std::filesystem::remove_all(dir);
  const std::string fdir = cfg.dir + "/fresh_live";
  auto f = OpenFresh(fdir, cfg, d, Durability::kAsync, BuildThreads(cfg), kNoThreshold);
  std::vector<VectorId> ids;
  std::vector<float> vecs;
  for (std::size_t s = 0; s < live.size(); s += 10000) {
    const std::size_t e = std::min(live.size(), s + 10000);
    ids.assign(live.begin() + s, live.begin() + e);
    vecs.resize(ids.size() * d.dim);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      auto r = d.row(ids[i]);
      std::copy(r.begin(), r.end(), vecs.begin() + i * d.dim);
    }
    Check(f->Upsert(ids, vecs), "upsert fresh");
  }
  const double fmerge_s = TimedMerge(*f, "merge fresh");
  json fresh =
      TagPending(SearchSweep(cfg, d, *f, gt_live, "fresh_live"), "deletes_fresh", live.size(), 0);
  json fs = Common(cfg, d, f.get());
  fs["phase"] = "fresh_live_summary";
  fs["merge_seconds"] = fmerge_s;
  summary["fresh_disk_bytes"] = fs["disk_bytes"];
  summary["disk_ratio_vs_fresh"] =
      summary["disk_bytes"].get<double>() / fs["disk_bytes"].get<double>();
  for (auto* js : {&pre, &post, &fresh}) {
    for (auto& r : *js) rows.push_back(r);
  }
  summary["scenario"] = "deletes";
  fs["scenario"] = "deletes";
  rows.push_back(summary);
  rows.push_back(fs);
  PrintRow(summary);
  PrintRow(fs);
  Check(f->Close(), "close");
  f.reset();
  std::filesystem::remove_all(fdir);
  return rows;
}

}  // namespace

// pending (+ merge_qps on its final merge when both are selected).
json RunPending(const Config& cfg, const Data& d, bool pending, bool merge_qps, bool deletes,
                json* mq_out, json* del_out) {
  json out = json::array();
  // Every row is recorded at once, so that a long run leaves partial results.
  auto keep = [&](const json& r) {
    out.push_back(r);
    SavePartial("pending", out);
  };
  const std::uint64_t n_total = cfg.n_merged + cfg.n_pending;
  if (n_total > d.base.rows() || cfg.n_small_pending > cfg.n_pending) {
    std::cerr << "pending: base holds " << d.base.rows() << " rows, need " << n_total << "\n";
    std::exit(1);
  }
  const std::string dir = cfg.dir + "/loaded";
  // One-pass build of the merged part: no index while loading, one Merge.
  auto c = OpenFresh(dir, cfg, d, Durability::kAsync, BuildThreads(cfg), kNoThreshold);
  auto t0 = Clock::now();
  LoadRows(*c, d, 0, cfg.n_merged, 10000);
  const double load_s = Seconds(t0, Clock::now());
  const double idle1_s = cfg.wait_idle ? WaitIdle() : 0;
  const double merge1_s = TimedMerge(*c, "merge");
  {
    json j = Common(cfg, d, c.get());
    j["phase"] = "load_merged";
    j["n"] = cfg.n_merged;
    j["upsert_seconds"] = load_s;
    j["wait_idle_seconds"] = idle1_s;
    j["merge_seconds"] = merge1_s;
    j["one_pass_build"] = true;
    j["merge_threads"] = BuildThreads(cfg);
    j["index_description"] = c->Stats().index_description;
    PrintRow(j);
    keep(j);
  }
  if (pending) {
    auto gt = ExactGt(cfg, d, Prefix(cfg.n_merged));
    for (auto& r :
         TagPending(SearchSweep(cfg, d, *c, gt, "merged"), "merged_base", cfg.n_merged, 0)) {
      keep(r);
    }
    LoadRows(*c, d, cfg.n_merged, cfg.n_merged + cfg.n_small_pending, cfg.batch);
    gt = ExactGt(cfg, d, Prefix(cfg.n_merged + cfg.n_small_pending));
    const double w = cfg.wait_idle ? WaitIdle() : 0;
    for (auto& r : TagPending(SearchSweep(cfg, d, *c, gt, "pending"), "small_pending",
                              cfg.n_merged + cfg.n_small_pending, cfg.n_small_pending)) {
      r["wait_idle_seconds"] = w;
      keep(r);
    }
  }
  t0 = Clock::now();
  LoadRows(*c, d, cfg.n_merged + (pending ? cfg.n_small_pending : 0), n_total, cfg.batch);
  const double load2_s = Seconds(t0, Clock::now());
  const auto gt_all = ExactGt(cfg, d, Prefix(n_total));
  if (pending) {
    const double w = cfg.wait_idle ? WaitIdle() : 0;
    for (auto& r : TagPending(SearchSweep(cfg, d, *c, gt_all, "pending"), "large_pending", n_total,
                              cfg.n_pending)) {
      r["wait_idle_seconds"] = w;  // after the upserts and the ground truth
      r["upsert_seconds"] = load2_s;
      keep(r);
    }
  }
  if (merge_qps) {
    // The realistic background merge: one merge thread.
    Check(c->Close(), "close");
    c.reset();
    c = Reopen(dir, 1, "reopen");
    *mq_out = MergeQps(cfg, d, *c);
    for (auto& j : *mq_out) {
      j["n"] = n_total;
      j["merge_threads"] = 1;
    }
  } else {
    t0 = Clock::now();
    Check(c->Merge(), "merge");
    json j = Common(cfg, d, c.get());
    j["scenario"] = "pending";
    j["phase"] = "merge";
    j["merge_seconds"] = Seconds(t0, Clock::now());
    j["streaming_merges"] = c->Stats().streaming_merges;
    j["merge_threads"] = BuildThreads(cfg);
    j["index_description"] = c->Stats().index_description;
    PrintRow(j);
    keep(j);
  }
  if (pending) {
    for (auto& r :
         TagPending(SearchSweep(cfg, d, *c, gt_all, "merged"), "merged_all", n_total, 0)) {
      keep(r);
    }
  }
  if (deletes) {
    *del_out = Deletes(cfg, d, std::move(c), dir, n_total);
  } else {
    Check(c->Close(), "close");
    c.reset();
    std::filesystem::remove_all(dir);
  }
  return out;
}

}  // namespace strata::bench
