// The helpers the collection_bench scenarios share (collection_bench_util.h):
// result rows, opening and loading collections, ground truth, the search sweep.
#include "collection_bench_util.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <limits>
#include <numeric>
#include <thread>
#include <utility>

namespace strata::bench {
namespace {

json* g_all = nullptr;
std::function<void()> g_save;

}  // namespace

// ---------------------------------------------------------------- result rows

void SetResultSink(json* all, std::function<void()> save) {
  g_all = all;
  g_save = std::move(save);
}

void SavePartial(const std::string& section, const json& rows) {
  if (g_all) {
    (*g_all)[section] = rows;
    if (g_save) g_save();
  }
}

void PrintRow(const json& row) { std::cout << row.dump() << std::endl; }

void AppendRow(json& rows, const json& row) {
  PrintRow(row);
  rows.push_back(row);
}

void Emit(const std::string& section, const json& row) {
  PrintRow(row);
  if (g_all) {
    (*g_all)[section].push_back(row);
    if (g_save) g_save();
  }
}

json Common(const Config& cfg, const Data& d, const Collection* c) {
  json j;
  j["dataset"] = cfg.dataset;
  j["index_type"] = cfg.index_type;
  j["dim"] = d.dim;
  j["nproc"] = std::thread::hardware_concurrency();
  j["loadavg"] = LoadAvg();
  j["peak_rss_mib"] = PeakRssMiB();
  if (c) {
    const CollectionStats s = c->Stats();
    j["live"] = s.live;
    j["indexed"] = s.indexed;
    j["pending"] = s.pending;
    j["ram_bytes"] = s.ram_bytes;
    j["disk_bytes"] = s.disk_bytes;
    j["index_version"] = s.index_version;
  }
  return j;
}

// ---------------------------------------------------------------- collections

std::unique_ptr<Collection> OpenFresh(const std::string& dir, const Config& cfg, const Data& d,
                                      Durability dur, unsigned merge_threads,
                                      std::uint64_t flat_threshold,
                                      const std::function<void(CollectionOptions&)>& tweak) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  CollectionOptions o;
  o.dim = d.dim;
  o.metric = Metric::kL2;
  o.index_type = cfg.index_type;
  o.flat_threshold = flat_threshold ? flat_threshold : cfg.flat_threshold;
  o.background_merge = false;
  o.durability = dur;
  o.merge_threads = merge_threads;
  if (tweak) tweak(o);
  auto r = Collection::Open(dir, o);
  if (!r.ok()) Die("open " + dir, r.status());
  return std::move(r.value());
}

std::unique_ptr<Collection> Reopen(const std::string& dir, unsigned merge_threads,
                                   const std::string& what,
                                   const std::function<void(CollectionOptions&)>& tweak) {
  CollectionOptions o;
  o.background_merge = false;
  o.merge_threads = merge_threads;
  o.create_if_missing = false;
  if (tweak) tweak(o);
  auto r = Collection::Open(dir, o);
  if (!r.ok()) Die(what, r.status());
  return std::move(r.value());
}

double TimedMerge(Collection& c, const std::string& what) {
  const auto t0 = Clock::now();
  Check(c.Merge(), what);
  return Seconds(t0, Clock::now());
}

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

std::vector<VectorId> Prefix(std::uint64_t n) {
  std::vector<VectorId> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

unsigned BuildThreads(const Config& cfg) {
  return cfg.build_threads ? cfg.build_threads : std::max(1u, std::thread::hardware_concurrency());
}

// ---------------------------------------------------------------- search

GroundTruth ExactGt(const Config& cfg, const Data& d, const std::vector<VectorId>& live) {
  const bool prefix = !live.empty() && live.back() == live.size() - 1;
  VectorMatrix compact;
  const float* basep = d.base.values<float>().data();
  if (!prefix) {
    auto m = VectorMatrix::Allocate(ElementType::kFloat32, live.size(), d.dim);
    if (!m.ok()) Die("alloc", m.status());
    compact = std::move(m.value());
    float* dst = compact.values<float>().data();
    for (std::size_t i = 0; i < live.size(); ++i) {
      std::copy_n(basep + live[i] * d.dim, d.dim, dst + i * d.dim);
    }
    basep = compact.values<float>().data();
  }
  ExactKnnOptions o;
  o.k = cfg.k;
  o.metric = Metric::kL2;
  o.threads = cfg.threads;
  auto gt = ComputeGroundTruth(ElementType::kFloat32, basep, live.size(),
                               d.queries.values<float>().data(), d.queries.rows(), d.dim, o);
  if (!gt.ok()) Die("ground truth", gt.status());
  GroundTruth g = std::move(gt.value());
  if (!prefix) {
    for (auto& id : g.ids) id = live[id];
  }
  return g;
}

CollectionSearchParams Params(const Config& cfg, std::uint32_t L) {
  CollectionSearchParams p;
  p.index.k = cfg.k;
  p.index.list_size = std::max(L, cfg.k);
  if (cfg.index_type == "ivf") p.index.nprobe = L;  // the sweep's knob for IVF
  return p;
}

json SearchSweep(const Config& cfg, const Data& d, const Collection& c, const GroundTruth& gt,
                 const std::string& phase) {
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
    j["recall"] = RecallAtK(res.value(), gt, cfg.k);
    j["qps"] = d.queries.rows() / s;
    j["p50_ms_1thread"] = Percentile(lat, 0.5);
    j["p99_ms_1thread"] = Percentile(lat, 0.99);
    j["mean_ms_1thread"] = std::accumulate(lat.begin(), lat.end(), 0.0) / lat.size();
    AppendRow(rows, j);
  }
  return rows;
}

}  // namespace strata::bench
