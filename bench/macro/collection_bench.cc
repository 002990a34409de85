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
//              Merge() is timed on one copy with streaming_merge=true
//              (FreshDiskANN StreamingMerge) and on the other with
//              streaming_merge=false (full rebuild of the same live set);
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
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "strata/collection.h"
#include "strata/dataset.h"
#include "strata/eval.h"

namespace {

using strata::Collection;
using strata::CollectionOptions;
using strata::CollectionSearchParams;
using strata::VectorId;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

[[noreturn]] void Die(const std::string& what, const strata::Status& st) {
  std::cerr << "collection_bench: " << what << ": " << st.ToString() << "\n";
  std::exit(1);
}
void Check(const strata::Status& st, const std::string& what) {
  if (!st.ok()) Die(what, st);
}

std::string LoadAvg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

double PeakRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

// Waits until the process's background threads (the pending-graph indexer,
// RocksDB compactions) are idle: CPU time grows < 0.05 s over 1 s, twice in a
// row (or max_s passes). Returns the seconds waited.
double WaitIdle(double max_s = 900) {
  const auto t0 = Clock::now();
  int quiet = 0;
  double last = ProcessCpuSeconds();
  while (quiet < 2 && std::chrono::duration<double>(Clock::now() - t0).count() < max_s) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double now = ProcessCpuSeconds();
    quiet = (now - last < 0.05) ? quiet + 1 : 0;
    last = now;
  }
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

struct Config {
  std::string base, queries, dir, json_out, scenarios = "all", dataset;
  std::uint64_t n_merged = 180000, n_pending = 20000, n_small_pending = 2000;
  std::uint64_t insert_batch_vectors = 50000, insert_singles = 5000, batch = 1000;
  std::vector<unsigned> writers{1, 8};
  std::vector<std::string> durabilities{"sync", "async"};
  std::vector<std::uint32_t> Ls{20, 50, 100};
  std::uint32_t k = 10;
  unsigned threads = 2;
  unsigned build_threads = 0;  // merge_threads for loading merges (0 = nproc)
  double singles_max_seconds = 30;
  double nomerge_seconds = 10;
  double delete_frac = 0.1;
  std::uint64_t flat_threshold = 1024;
  // merge_time
  std::uint64_t mt_n = 180000;
  double mt_new_frac = 0.1, mt_del_frac = 0.05;
  bool mt_rebuild = true;  // also time the full rebuild on a copy
  // live_build
  std::uint64_t lb_n = 0;  // 0 = all base rows
  unsigned lb_merge_threads = 0;  // 0 = nproc
  bool lb_throttle = false;  // writer waits for a running merge after each batch
  bool lb_one_pass = true;   // also build the one-pass comparison
  bool wait_idle = true;  // pending: wait for the indexer before sweeps/merges
};

// Every result row is appended to (*g_all)[section] and the JSON rewritten,
// so partial results survive.
json* g_all = nullptr;
std::function<void()> g_save;
void SavePartial(const std::string& section, const json& rows) {
  if (g_all) {
    (*g_all)[section] = rows;
    if (g_save) g_save();
  }
}
void Emit(const std::string& section, const json& row) {
  std::cout << row.dump() << std::endl;
  if (g_all) {
    (*g_all)[section].push_back(row);
    if (g_save) g_save();
  }
}

struct Data {
  strata::VectorMatrix base, queries;
  std::uint32_t dim = 0;
  std::span<const float> row(std::uint64_t i) const { return base.row<float>(i); }
};

// Shared columns of every result row.
json Common(const Config& cfg, const Data& d, const Collection* c) {
  json j;
  j["dataset"] = cfg.dataset;
  j["dim"] = d.dim;
  j["nproc"] = std::thread::hardware_concurrency();
  j["loadavg"] = LoadAvg();
  j["peak_rss_mib"] = PeakRssMiB();
  if (c) {
    const strata::CollectionStats s = c->Stats();
    j["live"] = s.live;
    j["indexed"] = s.indexed;
    j["pending"] = s.pending;
    j["ram_bytes"] = s.ram_bytes;
    j["disk_bytes"] = s.disk_bytes;
    j["index_version"] = s.index_version;
  }
  return j;
}

std::unique_ptr<Collection> OpenFresh(const std::string& dir, const Config& cfg, const Data& d,
                                      strata::Durability dur, unsigned merge_threads,
                                      std::uint64_t flat_threshold = 0,
                                      const std::function<void(CollectionOptions&)>& tweak = {}) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  CollectionOptions o;
  o.dim = d.dim;
  o.metric = strata::Metric::kL2;
  o.index_type = "graph";
  o.flat_threshold = flat_threshold ? flat_threshold : cfg.flat_threshold;
  o.background_merge = false;
  o.durability = dur;
  o.merge_threads = merge_threads;
  if (tweak) tweak(o);
  auto r = Collection::Open(dir, o);
  if (!r.ok()) Die("open " + dir, r.status());
  return std::move(r.value());
}

// flat_threshold for one-pass builds: never reached while loading.
constexpr std::uint64_t kNoThreshold = 1ull << 62;

// Upserts rows [begin, end) of the base (id = row) in batches of cfg.batch.
void LoadRows(Collection& c, const Data& d, std::uint64_t begin, std::uint64_t end,
              std::uint64_t batch) {
  std::vector<VectorId> ids;
  for (std::uint64_t s = begin; s < end; s += batch) {
    const std::uint64_t e = std::min(end, s + batch);
    ids.resize(e - s);
    std::iota(ids.begin(), ids.end(), s);
    std::span<const float> v(d.base.values<float>().data() + s * d.dim, (e - s) * d.dim);
    Check(c.Upsert(ids, v), "upsert");
  }
}

// ---------------------------------------------------------------- inserts

json RunInserts(const Config& cfg, const Data& d) {
  json out = json::array();
  const std::uint64_t need = 2 * cfg.flat_threshold + cfg.insert_batch_vectors + cfg.insert_singles;
  if (need > d.base.rows()) {
    std::cerr << "inserts: base too small (" << need << " rows needed)\n";
    std::exit(1);
  }
  for (const std::string& dname : cfg.durabilities) {
    auto dur = strata::ParseDurability(dname);
    if (!dur.ok()) Die("durability", dur.status());
    for (unsigned writers : cfg.writers) {
      const std::string dir = cfg.dir + "/inserts_" + dname + "_" + std::to_string(writers);
      auto c = OpenFresh(dir, cfg, d, dur.value(), 1);
      // Warm-up: batches until the threshold write builds the first index;
      // that call's time is the first build wait.
      std::uint64_t row = 0;
      double first_build_wait = 0;
      std::uint64_t first_build_live = 0;
      while (c->Stats().index_version == 0) {
        const std::uint64_t e = std::min<std::uint64_t>(row + cfg.batch, d.base.rows());
        const auto t0 = Clock::now();
        LoadRows(*c, d, row, e, cfg.batch);
        const auto t1 = Clock::now();
        row = e;
        if (c->Stats().index_version != 0) {
          first_build_wait = Seconds(t0, t1);
          first_build_live = c->Count();
        }
      }
      const double first_build_seconds = c->Stats().first_build_seconds;

      // Batch upserts: writers take batches from a shared counter.
      const std::uint64_t b_begin = row, b_end = row + cfg.insert_batch_vectors;
      std::atomic<std::uint64_t> next{b_begin};
      std::vector<std::vector<double>> batch_lat(writers);
      auto t0 = Clock::now();
      {
        std::vector<std::thread> pool;
        for (unsigned w = 0; w < writers; ++w) {
          pool.emplace_back([&, w] {
            std::vector<VectorId> ids;
            for (;;) {
              const std::uint64_t s = next.fetch_add(cfg.batch);
              if (s >= b_end) break;
              const std::uint64_t e = std::min(b_end, s + cfg.batch);
              ids.resize(e - s);
              std::iota(ids.begin(), ids.end(), s);
              std::span<const float> v(d.base.values<float>().data() + s * d.dim,
                                       (e - s) * d.dim);
              const auto a = Clock::now();
              Check(c->Upsert(ids, v), "batch upsert");
              batch_lat[w].push_back(Seconds(a, Clock::now()) * 1e3);
            }
          });
        }
        for (auto& t : pool) t.join();
      }
      const double batch_s = Seconds(t0, Clock::now());
      std::vector<double> bl;
      for (auto& v : batch_lat) bl.insert(bl.end(), v.begin(), v.end());

      // Single upserts: one id per call, until done or the time cap.
      const std::uint64_t s_begin = b_end, s_end = b_end + cfg.insert_singles;
      next = s_begin;
      std::vector<std::vector<double>> lat(writers);
      const auto deadline =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(cfg.singles_max_seconds));
      t0 = Clock::now();
      {
        std::vector<std::thread> pool;
        for (unsigned w = 0; w < writers; ++w) {
          pool.emplace_back([&, w] {
            for (;;) {
              if (Clock::now() > deadline) break;
              const std::uint64_t i = next.fetch_add(1);
              if (i >= s_end) break;
              const auto a = Clock::now();
              Check(c->Upsert(static_cast<VectorId>(i), d.row(i)), "single upsert");
              lat[w].push_back(Seconds(a, Clock::now()) * 1e3);
            }
          });
        }
        for (auto& t : pool) t.join();
      }
      const double singles_s = Seconds(t0, Clock::now());
      std::vector<double> all;
      for (auto& v : lat) all.insert(all.end(), v.begin(), v.end());

      json j = Common(cfg, d, c.get());
      j["scenario"] = "inserts";
      j["durability"] = dname;
      j["writers"] = writers;
      j["flat_threshold"] = cfg.flat_threshold;
      j["first_build_wait_s"] = first_build_wait;
      j["first_build_live"] = first_build_live;
      j["first_build_seconds_stat"] = first_build_seconds;
      j["batch_size"] = cfg.batch;
      j["batch_vectors"] = cfg.insert_batch_vectors;
      j["batch_seconds"] = batch_s;
      j["batch_vectors_per_s"] = cfg.insert_batch_vectors / batch_s;
      j["batch_call_p50_ms"] = Percentile(bl, 0.5);
      j["batch_call_p99_ms"] = Percentile(bl, 0.99);
      j["singles_requested"] = cfg.insert_singles;
      j["singles_done"] = all.size();
      j["singles_seconds"] = singles_s;
      j["singles_per_s"] = all.size() / singles_s;
      j["single_p50_ms"] = Percentile(all, 0.5);
      j["single_p99_ms"] = Percentile(all, 0.99);
      j["single_mean_ms"] =
          all.empty() ? 0 : std::accumulate(all.begin(), all.end(), 0.0) / all.size();
      std::cout << j.dump() << std::endl;
      out.push_back(j);
      Check(c->Close(), "close");
      c.reset();
      std::filesystem::remove_all(dir);
    }
  }
  return out;
}

// ---------------------------------------------------------------- search

// Exact k-NN of the queries over `live` (rows of the base, ascending user
// ids); returns ground truth in user ids.
strata::GroundTruth ExactGt(const Config& cfg, const Data& d, const std::vector<VectorId>& live) {
  const bool prefix = !live.empty() && live.back() == live.size() - 1;
  strata::VectorMatrix compact;
  const float* basep = d.base.values<float>().data();
  if (!prefix) {
    auto m = strata::VectorMatrix::Allocate(strata::ElementType::kFloat32, live.size(), d.dim);
    if (!m.ok()) Die("alloc", m.status());
    compact = std::move(m.value());
    float* dst = compact.values<float>().data();
    for (std::size_t i = 0; i < live.size(); ++i) {
      std::copy_n(basep + live[i] * d.dim, d.dim, dst + i * d.dim);
    }
    basep = compact.values<float>().data();
  }
  strata::ExactKnnOptions o;
  o.k = cfg.k;
  o.metric = strata::Metric::kL2;
  o.threads = cfg.threads;
  auto gt = strata::ComputeGroundTruth(strata::ElementType::kFloat32, basep, live.size(),
                                       d.queries.values<float>().data(), d.queries.rows(), d.dim, o);
  if (!gt.ok()) Die("ground truth", gt.status());
  strata::GroundTruth g = std::move(gt.value());
  if (!prefix) {
    for (auto& id : g.ids) id = live[id];
  }
  return g;
}

double Recall(const Config& cfg, const std::vector<std::vector<strata::SearchHit>>& res,
              const strata::GroundTruth& gt) {
  strata::GroundTruth r;
  r.num_queries = res.size();
  r.k = cfg.k;
  r.ids.assign(res.size() * cfg.k, strata::kInvalidVectorId);
  r.distances.assign(res.size() * cfg.k, std::numeric_limits<float>::infinity());
  for (std::size_t q = 0; q < res.size(); ++q) {
    for (std::size_t i = 0; i < res[q].size() && i < cfg.k; ++i) {
      r.ids[q * cfg.k + i] = res[q][i].id;
      r.distances[q * cfg.k + i] = res[q][i].distance;
    }
  }
  auto rep = strata::ComputeRecall(r, gt, cfg.k);
  if (!rep.ok()) Die("recall", rep.status());
  return rep.value().mean_recall;
}

CollectionSearchParams Params(const Config& cfg, std::uint32_t L) {
  CollectionSearchParams p;
  p.index.k = cfg.k;
  p.index.list_size = std::max(L, cfg.k);
  return p;
}

// Recall + QPS (SearchBatch, cfg.threads) + per-query latency (one thread).
json SearchSweep(const Config& cfg, const Data& d, const Collection& c,
                 const strata::GroundTruth& gt, const std::string& phase) {
  json rows = json::array();
  const std::span<const float> qs = d.queries.values<float>();
  for (std::uint32_t L : cfg.Ls) {
    const CollectionSearchParams p = Params(cfg, L);
    (void)c.SearchBatch(qs, p, cfg.threads);  // warm-up (page cache, searcher pools)
    auto t0 = Clock::now();
    auto res = c.SearchBatch(qs, p, cfg.threads);
    const double s = Seconds(t0, Clock::now());
    if (!res.ok()) Die("search batch", res.status());
    std::vector<double> lat;
    lat.reserve(d.queries.rows());
    for (std::uint64_t q = 0; q < d.queries.rows(); ++q) {
      const auto a = Clock::now();
      auto r = c.Search(d.queries.row<float>(q), p);
      lat.push_back(Seconds(a, Clock::now()) * 1e3);
      if (!r.ok()) Die("search", r.status());
    }
    json j = Common(cfg, d, &c);
    j["phase"] = phase;
    j["k"] = cfg.k;
    j["L"] = L;
    j["threads"] = cfg.threads;
    j["queries"] = d.queries.rows();
    j["recall"] = Recall(cfg, res.value(), gt);
    j["qps"] = d.queries.rows() / s;
    j["p50_ms_1thread"] = Percentile(lat, 0.5);
    j["p99_ms_1thread"] = Percentile(lat, 0.99);
    j["mean_ms_1thread"] = std::accumulate(lat.begin(), lat.end(), 0.0) / lat.size();
    std::cout << j.dump() << std::endl;
    rows.push_back(j);
  }
  return rows;
}

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
  const strata::CollectionStats before = c.Stats();
  std::atomic<bool> merge_done{false};
  double merge_s = 0;
  strata::Status merge_st;
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
    std::cout << j.dump() << std::endl;
    rows.push_back(j);
  }
  rows[1]["qps_ratio"] = rows[1]["qps"].get<double>() / rows[0]["qps"].get<double>();
  rows[1]["p99_ratio"] = rows[1]["p99_ms"].get<double>() / rows[0]["p99_ms"].get<double>();
  return rows;
}

std::vector<VectorId> Prefix(std::uint64_t n) {
  std::vector<VectorId> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

unsigned BuildThreads(const Config& cfg) {
  return cfg.build_threads ? cfg.build_threads : std::max(1u, std::thread::hardware_concurrency());
}

// pending (+ merge_qps on its final merge when both are selected).
json RunPending(const Config& cfg, const Data& d, bool pending, bool merge_qps, bool deletes,
                json* mq_out, json* del_out) {
  json out = json::array();
  const std::uint64_t n_total = cfg.n_merged + cfg.n_pending;
  if (n_total > d.base.rows() || cfg.n_small_pending > cfg.n_pending) {
    std::cerr << "pending: base holds " << d.base.rows() << " rows, need " << n_total << "\n";
    std::exit(1);
  }
  const std::string dir = cfg.dir + "/loaded";
  // One-pass build of the merged part: no index while loading, one Merge.
  auto c = OpenFresh(dir, cfg, d, strata::Durability::kAsync, BuildThreads(cfg), kNoThreshold);
  auto t0 = Clock::now();
  LoadRows(*c, d, 0, cfg.n_merged, 10000);
  const double load_s = Seconds(t0, Clock::now());
  const double idle1_s = cfg.wait_idle ? WaitIdle() : 0;
  t0 = Clock::now();
  Check(c->Merge(), "merge");
  const double merge1_s = Seconds(t0, Clock::now());
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
    std::cout << j.dump() << std::endl;
    { out.push_back(j); SavePartial("pending", out); }
  }
  auto tag = [](json rows, const std::string& name, std::uint64_t n, std::uint64_t pend) {
    for (auto& r : rows) {
      r["scenario"] = "pending";
      r["case"] = name;
      r["n"] = n;
      r["n_pending"] = pend;
    }
    return rows;
  };
  if (pending) {
    auto gt = ExactGt(cfg, d, Prefix(cfg.n_merged));
    for (auto& r : tag(SearchSweep(cfg, d, *c, gt, "merged"), "merged_base", cfg.n_merged, 0))
      { out.push_back(r); SavePartial("pending", out); }
    LoadRows(*c, d, cfg.n_merged, cfg.n_merged + cfg.n_small_pending, cfg.batch);
    gt = ExactGt(cfg, d, Prefix(cfg.n_merged + cfg.n_small_pending));
    const double w = cfg.wait_idle ? WaitIdle() : 0;
    for (auto& r : tag(SearchSweep(cfg, d, *c, gt, "pending"), "small_pending",
                       cfg.n_merged + cfg.n_small_pending, cfg.n_small_pending)) {
      r["wait_idle_seconds"] = w;
      { out.push_back(r); SavePartial("pending", out); }
    }
  }
  t0 = Clock::now();
  LoadRows(*c, d, cfg.n_merged + (pending ? cfg.n_small_pending : 0), n_total, cfg.batch);
  const double load2_s = Seconds(t0, Clock::now());
  const auto gt_all = ExactGt(cfg, d, Prefix(n_total));
  if (pending) {
    const double w = cfg.wait_idle ? WaitIdle() : 0;
    for (auto& r : tag(SearchSweep(cfg, d, *c, gt_all, "pending"), "large_pending", n_total,
                       cfg.n_pending)) {
      r["wait_idle_seconds"] = w;  // after the upserts and the ground truth
      r["upsert_seconds"] = load2_s;
      { out.push_back(r); SavePartial("pending", out); }
    }
  }
  if (merge_qps) {
    // The realistic background merge: one merge thread.
    Check(c->Close(), "close");
    c.reset();
    CollectionOptions o;
    o.background_merge = false;
    o.merge_threads = 1;
    o.create_if_missing = false;
    auto r = Collection::Open(dir, o);
    if (!r.ok()) Die("reopen", r.status());
    c = std::move(r.value());
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
    std::cout << j.dump() << std::endl;
    { out.push_back(j); SavePartial("pending", out); }
  }
  if (pending) {
    for (auto& r : tag(SearchSweep(cfg, d, *c, gt_all, "merged"), "merged_all", n_total, 0))
      { out.push_back(r); SavePartial("pending", out); }
  }
  if (deletes) {
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
    t0 = Clock::now();
    auto dr = c->Delete(del);
    if (!dr.ok()) Die("delete", dr.status());
    const double del_s = Seconds(t0, Clock::now());
    const auto gt_live = ExactGt(cfg, d, live);
    json pre = tag(SearchSweep(cfg, d, *c, gt_live, "deleted_unmerged"), "deletes", live.size(), 0);
    t0 = Clock::now();
    Check(c->Merge(), "merge");
    const double merge_s = Seconds(t0, Clock::now());
    json post = tag(SearchSweep(cfg, d, *c, gt_live, "deleted_merged"), "deletes", live.size(), 0);
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
    auto f = OpenFresh(fdir, cfg, d, strata::Durability::kAsync, BuildThreads(cfg), kNoThreshold);
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
    t0 = Clock::now();
    Check(f->Merge(), "merge fresh");
    const double fmerge_s = Seconds(t0, Clock::now());
    json fresh = tag(SearchSweep(cfg, d, *f, gt_live, "fresh_live"), "deletes_fresh",
                     live.size(), 0);
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
    std::cout << summary.dump() << "\n" << fs.dump() << std::endl;
    *del_out = rows;
    Check(f->Close(), "close");
    f.reset();
    std::filesystem::remove_all(fdir);
  } else {
    Check(c->Close(), "close");
    c.reset();
    std::filesystem::remove_all(dir);
  }
  return out;
}

// ---------------------------------------------------------------- merge_time

void RunMergeTime(const Config& cfg, const Data& d) {
  const std::uint64_t n = cfg.mt_n;
  const std::uint64_t n_new = static_cast<std::uint64_t>(cfg.mt_new_frac * n);
  const std::uint64_t n_del = static_cast<std::uint64_t>(cfg.mt_del_frac * n);
  if (n + n_new > d.base.rows()) {
    std::cerr << "merge_time: base holds " << d.base.rows() << " rows, need " << n + n_new << "\n";
    std::exit(1);
  }
  const unsigned mt = BuildThreads(cfg);
  const std::string dir_s = cfg.dir + "/mt_stream", dir_r = cfg.dir + "/mt_rebuild";
  auto tag = [&](json j) {
    j["scenario"] = "merge_time";
    j["n"] = n;
    j["n_new"] = n_new;
    j["n_deleted"] = n_del;
    j["merge_threads"] = mt;
    return j;
  };
  {
    auto c = OpenFresh(dir_s, cfg, d, strata::Durability::kAsync, mt, kNoThreshold);
    auto t0 = Clock::now();
    LoadRows(*c, d, 0, n, 10000);
    const double load_s = Seconds(t0, Clock::now());
    const double idle_s = WaitIdle();
    t0 = Clock::now();
    Check(c->Merge(), "merge (one-pass build)");
    const double build_s = Seconds(t0, Clock::now());
    json j = tag(Common(cfg, d, c.get()));
    j["phase"] = "one_pass_build";
    j["upsert_seconds"] = load_s;
    j["wait_idle_seconds"] = idle_s;
    j["merge_seconds"] = build_s;
    j["streaming_merges"] = c->Stats().streaming_merges;
    j["index_description"] = c->Stats().index_description;
    Emit("merge_time", j);
    // Updates: n_new new ids (rows n..n+n_new), then delete n_del of the old ids.
    t0 = Clock::now();
    LoadRows(*c, d, n, n + n_new, cfg.batch);
    std::vector<VectorId> old = Prefix(n);
    std::mt19937_64 rng(42);
    std::shuffle(old.begin(), old.end(), rng);
    std::vector<VectorId> del(old.begin(), old.begin() + n_del);
    std::sort(del.begin(), del.end());
    auto dr = c->Delete(del);
    if (!dr.ok()) Die("delete", dr.status());
    const double upd_s = Seconds(t0, Clock::now());
    json u = tag(Common(cfg, d, c.get()));
    u["phase"] = "updates";
    u["update_seconds"] = upd_s;
    u["deleted"] = dr.value();
    Emit("merge_time", u);
    Check(c->Close(), "close");
  }
  std::error_code ec;
  std::filesystem::remove_all(dir_r, ec);
  if (cfg.mt_rebuild) {
    std::filesystem::copy(dir_s, dir_r, std::filesystem::copy_options::recursive);
  }
  // The live set: old ids not deleted + the new ones.
  std::vector<VectorId> live;
  {
    std::vector<VectorId> old = Prefix(n);
    std::mt19937_64 rng(42);
    std::shuffle(old.begin(), old.end(), rng);
    live.assign(old.begin() + n_del, old.end());
    for (std::uint64_t i = n; i < n + n_new; ++i) live.push_back(i);
    std::sort(live.begin(), live.end());
  }
  const auto gt = ExactGt(cfg, d, live);
  double secs[2] = {0, 0};
  for (int mode = 0; mode < (cfg.mt_rebuild ? 2 : 1); ++mode) {
    const bool streaming = mode == 0;
    const std::string& dir = streaming ? dir_s : dir_r;
    CollectionOptions o;
    o.background_merge = false;
    o.merge_threads = mt;
    o.create_if_missing = false;
    o.streaming_merge = streaming;
    auto r = Collection::Open(dir, o);
    if (!r.ok()) Die("reopen " + dir, r.status());
    auto c = std::move(r.value());
    const double idle_s = WaitIdle();
    const strata::CollectionStats before = c->Stats();
    const double cpu0 = ProcessCpuSeconds();
    auto t0 = Clock::now();
    Check(c->Merge(), "merge");
    secs[mode] = Seconds(t0, Clock::now());
    const double cpu = ProcessCpuSeconds() - cpu0;
    const strata::CollectionStats after = c->Stats();
    const std::string ph = streaming ? "streaming_merge" : "full_rebuild";
    json j = tag(Common(cfg, d, c.get()));
    j["phase"] = ph;
    j["streaming_merge_option"] = streaming;
    j["wait_idle_seconds"] = idle_s;
    j["pending_before"] = before.pending;
    j["deleted_before"] = before.deleted;
    j["indexed_before"] = before.indexed;
    j["merge_seconds"] = secs[mode];
    j["merge_cpu_seconds"] = cpu;
    j["last_merge_seconds_stat"] = after.last_merge_seconds;
    j["streaming_merges_delta"] = after.streaming_merges - before.streaming_merges;
    j["merges_delta"] = after.merges - before.merges;
    j["index_description"] = after.index_description;
    Emit("merge_time", j);
    for (auto& row : SearchSweep(cfg, d, *c, gt, ph)) Emit("merge_time", tag(row));
    Check(c->Close(), "close");
    c.reset();
  }
  json s = tag(json::object());
  s["phase"] = "summary";
  s["streaming_seconds"] = secs[0];
  s["rebuild_seconds"] = secs[1];
  if (cfg.mt_rebuild) {
    s["ratio_streaming_over_rebuild"] = secs[0] / secs[1];
    s["speedup"] = secs[1] / secs[0];
  }
  s["loadavg"] = LoadAvg();
  Emit("merge_time", s);
  std::filesystem::remove_all(dir_s, ec);
  std::filesystem::remove_all(dir_r, ec);
}

// ---------------------------------------------------------------- live_build

void RunLiveBuild(const Config& cfg, const Data& d) {
  const std::uint64_t n = cfg.lb_n ? cfg.lb_n : d.base.rows();
  if (n > d.base.rows()) {
    std::cerr << "live_build: base too small\n";
    std::exit(1);
  }
  const unsigned lmt = cfg.lb_merge_threads ? cfg.lb_merge_threads : BuildThreads(cfg);
  const auto gt = ExactGt(cfg, d, Prefix(n));
  auto tag = [&](json j) {
    j["scenario"] = "live_build";
    j["n"] = n;
    j["batch_size"] = cfg.batch;
    return j;
  };
  {
    const std::string dir = cfg.dir + "/live_build";
    CollectionOptions defaults;
    auto c = OpenFresh(dir, cfg, d, strata::Durability::kAsync, lmt, 0,
                       [](CollectionOptions& o) { o.background_merge = true; });
    // Monitor: one row per merge completion (Stats().merges changes).
    std::atomic<bool> stop{false};
    json timeline = json::array();
    const auto t0 = Clock::now();
    std::thread mon([&] {
      std::uint64_t last = 0;
      while (!stop) {
        const strata::CollectionStats st = c->Stats();
        if (st.merges != last) {
          last = st.merges;
          timeline.push_back({{"t", Seconds(t0, Clock::now())},
                              {"merges", st.merges},
                              {"streaming_merges", st.streaming_merges},
                              {"indexed", st.indexed},
                              {"pending", st.pending},
                              {"live", st.live},
                              {"last_merge_seconds", st.last_merge_seconds},
                              {"loadavg", LoadAvg()}});
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
    if (cfg.lb_throttle) {
      // A writer that never outruns the merges: after each batch, if a merge
      // is running, wait for it (so each merge folds about what the policy
      // asked for, max(count, ratio * indexed), instead of everything
      // written while the previous one ran).
      for (std::uint64_t s = 0; s < n; s += cfg.batch) {
        LoadRows(*c, d, s, std::min(n, s + cfg.batch), cfg.batch);
        if (c->Stats().merging) Check(c->WaitForMerge(), "wait for merge");
      }
    } else {
      LoadRows(*c, d, 0, n, cfg.batch);
    }
    const double insert_s = Seconds(t0, Clock::now());
    const strata::CollectionStats at_insert_end = c->Stats();
    Check(c->WaitForMerge(), "wait for merge");
    const double wait_s = Seconds(t0, Clock::now());
    const strata::CollectionStats before_final = c->Stats();
    Check(c->Merge(), "final merge");
    const double total_s = Seconds(t0, Clock::now());
    stop = true;
    mon.join();
    const strata::CollectionStats st = c->Stats();
    json j = tag(Common(cfg, d, c.get()));
    j["phase"] = "live_build";
    j["background_merge"] = true;
    j["writer_throttled"] = cfg.lb_throttle;
    j["merge_threads"] = lmt;
    j["merge_pending_count"] = defaults.merge_pending_count;
    j["merge_pending_ratio"] = defaults.merge_pending_ratio;
    j["flat_threshold"] = cfg.flat_threshold;
    j["insert_seconds"] = insert_s;
    j["insert_end_indexed"] = at_insert_end.indexed;
    j["insert_end_pending"] = at_insert_end.pending;
    j["insert_end_merges"] = at_insert_end.merges;
    j["wait_for_merge_done_s"] = wait_s;
    j["final_merge_pending"] = before_final.pending;
    j["total_seconds"] = total_s;
    j["merges"] = st.merges;
    j["streaming_merges"] = st.streaming_merges;
    j["first_build_seconds"] = st.first_build_seconds;
    j["index_description"] = st.index_description;
    j["timeline"] = timeline;
    Emit("live_build", j);
    for (auto& row : SearchSweep(cfg, d, *c, gt, "live_build")) Emit("live_build", tag(row));
    Check(c->Close(), "close");
    c.reset();
    std::filesystem::remove_all(dir);
  }
  if (cfg.lb_one_pass) {
    const std::string dir = cfg.dir + "/one_pass";
    const unsigned mt = BuildThreads(cfg);
    auto c = OpenFresh(dir, cfg, d, strata::Durability::kAsync, mt, kNoThreshold);
    auto t0 = Clock::now();
    LoadRows(*c, d, 0, n, cfg.batch);
    const double load_s = Seconds(t0, Clock::now());
    // Merge right away (the indexer may still be graphing the pending set:
    // it competes for the cores, as it does in the live build).
    auto t1 = Clock::now();
    Check(c->Merge(), "one-pass merge");
    const double merge_s = Seconds(t1, Clock::now());
    json j = tag(Common(cfg, d, c.get()));
    j["phase"] = "one_pass";
    j["merge_threads"] = mt;
    j["upsert_seconds"] = load_s;
    j["merge_seconds"] = merge_s;
    j["total_seconds"] = load_s + merge_s;
    j["index_description"] = c->Stats().index_description;
    Emit("live_build", j);
    for (auto& row : SearchSweep(cfg, d, *c, gt, "one_pass")) Emit("live_build", tag(row));
    Check(c->Close(), "close");
    c.reset();
    std::filesystem::remove_all(dir);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  CLI::App app{"End-to-end benchmark of the Collection (inserts, pending, merge_qps, deletes)"};
  app.add_option("--base", cfg.base, "Base vectors (any format strata reads)")->required();
  app.add_option("--queries", cfg.queries, "Query vectors")->required();
  app.add_option("--dir", cfg.dir, "Scratch directory for collections")->required();
  app.add_option("--json", cfg.json_out, "Write all result rows here");
  app.add_option("--scenario", cfg.scenarios, "inserts,pending,merge_qps,deletes,merge_time,live_build or all");
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
  app.add_option("--L", cfg.Ls, "Search list sizes")->delimiter(',');
  app.add_option("--k", cfg.k, "Neighbours");
  app.add_option("--threads", cfg.threads, "Search threads");
  app.add_option("--build-threads", cfg.build_threads, "merge_threads of loading merges (0 = nproc)");
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
  g_all = &all;
  g_save = save;
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
