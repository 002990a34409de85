// in_place_bench: in-place inserts on the decoupled graph layout
// (include/strata/in_place_graph.h) while searches run, over the public API.
//
// The graph index in --index was built from the first --start rows of
// --base, its decoupled layout written to --decoupled (`strata decouple`).
// The bench then
//   1. searches only, --search-seconds, on --search-threads threads: QPS,
//      p50/p90/p99 latency, pages per query, recall@10 against the exact
//      ground truth of the rows held (computed here);
//   2. inserts rows --start..--end on one writer thread while the search
//      threads keep searching: per one-second window the inserts and
//      searches done and the searches' p90/p99; recall@10 of the searches
//      made in each tenth of the inserts, against the exact ground truth of
//      the rows held when that tenth began (rows inserted later in the tenth
//      can only make it look lower); per insert the pages read and written,
//      bytes written and the time breakdown (position seeking, prune and
//      back-edges, writes, switch); the write volume a packed in-place
//      layout (OdinANN-like: a node record holds its vector and its list)
//      would have had for the same changes is given as a model, one 4 KiB
//      node sector per changed list;
//   3. searches only again, and with --fresh-index/--fresh-decoupled (the
//      same rows built in one pass) the same queries on that index: recall
//      after the inserts against a fresh build at the same L.
// JSON to --json, one object.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/in_place_graph.h"

namespace strata::bench {
namespace {

struct Config {
  std::string index, decoupled, base, queries, json, fresh_index, fresh_decoupled;
  std::uint64_t start = 0, end = 0;
  std::uint32_t L = 50, k = 10, search_threads = 1;
  std::uint32_t back_edges = 0;
  std::uint32_t insert_L = 64, exact_neighbours = 8, insert_W = 8, insert_threads = 1;
  bool no_entrance = false;
  std::uint32_t hot_page_heat = 0;
  std::uint32_t rerank_group = 0, cache_mib = 0;
  std::string cache_policy = "lfu";
  double search_seconds = 10;
};

struct SearchRecord {
  std::uint32_t query;
  std::uint64_t rows;  // rows held when it began
  double latency_us;
  std::uint32_t pages;
  std::uint32_t cache_hits;  // edge pages served by the hot-page cache
  double at_s;  // since the insert phase began
  std::vector<VectorId> ids;
};

GroundTruth Exact(const VectorMatrix& base, std::uint64_t rows, const VectorMatrix& queries,
                  std::uint32_t k) {
  ExactKnnOptions o;
  o.k = k;
  o.threads = 2;
  auto gt = ComputeGroundTruth(ElementType::kFloat32, base.bytes(), rows, queries.bytes(),
                               queries.rows(), base.dim(), o);
  Check(gt.status(), "ground truth");
  return std::move(*gt);
}

double Recall(const std::vector<const SearchRecord*>& records, const GroundTruth& gt,
              std::uint32_t k) {
  if (records.empty()) return 0;
  double hits = 0;
  for (const SearchRecord* r : records) {
    const auto truth = gt.ids_of(r->query);
    for (std::uint32_t i = 0; i < k; ++i) {
      hits += std::find(truth.begin(), truth.end(), r->ids[i]) != truth.end();
    }
  }
  return hits / (static_cast<double>(records.size()) * k);
}

// Search threads looping over the queries until `stop`.
class SearchLoad {
 public:
  SearchLoad(const Index& index, const VectorMatrix& queries, const Config& cfg,
             const std::function<std::uint64_t()>& rows_now)
      : index_(index), queries_(queries), cfg_(cfg), rows_now_(rows_now) {}

  // Graph rows -> base rows (inserts on several threads), or null.
  void set_row_map(const std::atomic<std::uint32_t>* map) { row_map_ = map; }

  void Start(Clock::time_point t0) {
    t0_ = t0;
    stop_ = false;
    for (std::uint32_t t = 0; t < cfg_.search_threads; ++t) {
      threads_.emplace_back([this, t] { Run(t); });
    }
  }
  std::vector<SearchRecord> Stop() {
    stop_ = true;
    for (auto& th : threads_) th.join();
    threads_.clear();
    std::vector<SearchRecord> all;
    for (auto& r : per_thread_) all.insert(all.end(), r.begin(), r.end());
    per_thread_.clear();
    return all;
  }

 private:
  void Run(std::uint32_t t) {
    SearchParams p;
    p.k = cfg_.k;
    p.list_size = cfg_.L;
    p.rerank_group = cfg_.rerank_group;
    auto searcher = index_.NewSearcher(p);
    Check(searcher.status(), "searcher");
    std::vector<SearchRecord> mine;
    std::vector<float> dist(cfg_.k);
    for (std::uint64_t i = t * 7919; !stop_.load(); ++i) {
      SearchRecord r;
      r.query = static_cast<std::uint32_t>(i % queries_.rows());
      r.rows = rows_now_();
      r.ids.resize(cfg_.k);
      QueryStats s;
      Check((*searcher)->Search(queries_.row<float>(r.query), p, r.ids, dist, &s), "search");
      if (row_map_ != nullptr) {
        for (VectorId& id : r.ids) {
          if (id != kInvalidVectorId) id = row_map_[id].load();
        }
      }
      r.latency_us = s.latency_us;
      r.pages = s.pages_read;
      r.cache_hits = s.cache_hits;
      r.at_s = Seconds(t0_, Clock::now());
      mine.push_back(std::move(r));
    }
    std::lock_guard<std::mutex> lock(mu_);
    per_thread_.push_back(std::move(mine));
  }
  const Index& index_;
  const VectorMatrix& queries_;
  const Config& cfg_;
  std::function<std::uint64_t()> rows_now_;
  const std::atomic<std::uint32_t>* row_map_ = nullptr;
  Clock::time_point t0_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::vector<std::vector<SearchRecord>> per_thread_;
};

nlohmann::json Summary(const std::vector<SearchRecord>& rs, double seconds) {
  std::vector<double> lat;
  double pages = 0, hits = 0;
  for (const auto& r : rs) {
    lat.push_back(r.latency_us / 1000.0);
    pages += r.pages;
    hits += r.cache_hits;
  }
  return {{"searches", rs.size()},
          {"qps", rs.size() / seconds},
          {"p50_ms", Percentile(lat, 0.50)},
          {"p90_ms", Percentile(lat, 0.90)},
          {"p99_ms", Percentile(lat, 0.99)},
          {"pages_per_query", rs.empty() ? 0 : pages / rs.size()},
          {"cache_hit_rate", pages + hits > 0 ? hits / (pages + hits) : 0}};
}

nlohmann::json SearchOnly(const Index& index, const VectorMatrix& queries, const Config& cfg,
                          std::uint64_t rows, const GroundTruth& gt,
                          const std::atomic<std::uint32_t>* row_map = nullptr) {
  SearchLoad load(index, queries, cfg, [rows] { return rows; });
  load.set_row_map(row_map);
  const auto t0 = Clock::now();
  load.Start(t0);
  std::this_thread::sleep_for(std::chrono::duration<double>(cfg.search_seconds));
  std::vector<SearchRecord> rs = load.Stop();
  const double seconds = Seconds(t0, Clock::now());
  std::vector<const SearchRecord*> all;
  for (const auto& r : rs) all.push_back(&r);
  nlohmann::json j = Summary(rs, seconds);
  j["recall_at_10"] = Recall(all, gt, cfg.k);
  j["rows"] = rows;
  return j;
}

int Main(const Config& cfg) {
  auto base = ReadVectorsAsFloat(cfg.base);
  Check(base.status(), "base");
  auto queries = ReadVectorsAsFloat(cfg.queries);
  Check(queries.status(), "queries");
  if (cfg.end > base->rows() || cfg.start >= cfg.end) {
    Die("rows", Status::InvalidArgument("need start < end <= base rows"));
  }
  nlohmann::json out;
  out["config"] = {{"base", cfg.base}, {"start", cfg.start}, {"end", cfg.end}, {"L", cfg.L},
                   {"k", cfg.k}, {"search_threads", cfg.search_threads},
                   {"insert_threads", cfg.insert_threads}, {"insert_L", cfg.insert_L},
                   {"exact_neighbours", cfg.exact_neighbours}, {"back_edges", cfg.back_edges}, {"insert_W", cfg.insert_W}, {"entrance_updates", !cfg.no_entrance},
                   {"hot_page_heat", cfg.hot_page_heat},
                   {"rerank_group", cfg.rerank_group}, {"cache_mib", cfg.cache_mib},
                   {"cache_policy", cfg.cache_policy}, {"nproc", std::thread::hardware_concurrency()},
                   {"loadavg_start", LoadAvg()}};
  InPlaceGraphOptions o;
  o.capacity = static_cast<std::uint32_t>(cfg.end + 1024);
  o.L = cfg.insert_L;
  o.exact_neighbours = cfg.exact_neighbours;
  o.back_edges = cfg.back_edges;
  o.beam_width = cfg.insert_W;
  o.entrance_updates = !cfg.no_entrance;
  o.hot_page_heat = cfg.hot_page_heat;
  OpenOptions open;
  open.cache_mib = cfg.cache_mib;
  const std::pair<const char*, EdgeCachePolicy> policies[] = {
      {"navis", EdgeCachePolicy::kNavis}, {"lru", EdgeCachePolicy::kLru},
      {"clock", EdgeCachePolicy::kClock}, {"lfu", EdgeCachePolicy::kLfu}};
  bool known = false;
  for (const auto& [name, policy] : policies) {
    if (cfg.cache_policy == name) {
      open.edge_cache_policy = policy;
      known = true;
    }
  }
  if (!known) Die("--cache-policy", Status::InvalidArgument(cfg.cache_policy));
  auto graph = InPlaceGraph::Open(cfg.index, cfg.decoupled, o, open);
  Check(graph.status(), "open");
  const std::uint64_t pages_at_open = (*graph)->edge_pages();
  std::cerr << "search only, " << cfg.start << " rows\n";
  const GroundTruth gt_start = Exact(*base, cfg.start, *queries, cfg.k);
  out["search_only_before"] = SearchOnly((*graph)->index(), *queries, cfg, cfg.start, gt_start);
  std::cerr << out["search_only_before"].dump() << "\n";

  // Inserts with searches beside them, on --insert-threads threads taking
  // the rows in order; a row's place in the graph may then differ from its
  // place in the base, so results are mapped back through `base_of`.
  std::atomic<std::uint64_t> rows{cfg.start};
  std::unique_ptr<std::atomic<std::uint32_t>[]> base_of(new std::atomic<std::uint32_t>[cfg.end]);
  for (std::uint64_t r = 0; r < cfg.end; ++r) base_of[r].store(static_cast<std::uint32_t>(r));
  SearchLoad load((*graph)->index(), *queries, cfg, [&] { return rows.load(); });
  load.set_row_map(base_of.get());
  std::vector<double> insert_done_at;
  double seek = 0, prune = 0, write = 0, publish = 0;
  std::uint64_t bytes = 0, lists = 0, pages_written = 0, pages_read = 0, reused = 0, pruned = 0,
                hot = 0;
  std::mutex totals_mu;
  std::atomic<std::uint64_t> next{cfg.start};
  const auto t0 = Clock::now();
  load.Start(t0);
  auto inserter = [&] {
    for (std::uint64_t r = next++; r < cfg.end; r = next++) {
      InsertReport rep;
      auto row = (*graph)->Insert(base->row<float>(r), &rep);
      Check(row.status(), "insert");
      if (*row >= cfg.end) Die("insert", Status::Corruption("row numbering"));
      base_of[*row].store(static_cast<std::uint32_t>(r));
      const std::uint64_t done = rows.fetch_add(1) + 1;
      std::lock_guard<std::mutex> lock(totals_mu);
      insert_done_at.push_back(Seconds(t0, Clock::now()));
      seek += rep.seek_us;
      prune += rep.prune_us;
      write += rep.write_us;
      publish += rep.publish_us;
      bytes += rep.bytes_written;
      lists += rep.lists_written;
      pages_written += rep.edge_pages_written;
      pages_read += rep.pages_read;
      reused += rep.pages_reused;
      pruned += rep.lists_pruned;
      hot += rep.hot_pages_rewritten;
      if ((done - cfg.start) % 10000 == 0) std::cerr << "inserted " << done - cfg.start << "\n";
    }
  };
  std::vector<std::thread> writers;
  for (std::uint32_t t = 0; t < cfg.insert_threads; ++t) writers.emplace_back(inserter);
  for (auto& w : writers) w.join();
  const double insert_seconds = Seconds(t0, Clock::now());
  std::vector<SearchRecord> during = load.Stop();
  const double n = static_cast<double>(cfg.end - cfg.start);
  out["inserts"] = {
      {"count", cfg.end - cfg.start},
      {"seconds", insert_seconds},
      {"per_second", n / insert_seconds},
      {"mean_us", {{"position_seeking", seek / n}, {"prune_and_back_edges", prune / n},
                   {"writes", write / n}, {"switch", publish / n}}},
      {"pages_read_per_insert", pages_read / n},
      {"lists_written_per_insert", lists / n},
      {"lists_pruned_per_insert", pruned / n},
      {"edge_pages_written_per_insert", pages_written / n},
      {"hot_pages_rewritten_per_insert", hot / n},
      {"reused_page_share", pages_written ? static_cast<double>(reused) / pages_written : 0},
      {"bytes_written_per_insert", bytes / n},
      {"packed_in_place_model_bytes_per_insert", (lists / n) * 4096.0},
      {"edge_file_pages_added", (*graph)->edge_pages() - pages_at_open},
      {"free_edge_pages_at_end", (*graph)->free_edge_pages()},
      {"peak_rss_mib", PeakRssMiB()}};
  out["during_inserts"] = Summary(during, insert_seconds);
  // One-second windows.
  nlohmann::json windows = nlohmann::json::array();
  const auto nwin = static_cast<std::size_t>(insert_seconds) + 1;
  std::vector<std::vector<double>> lat(nwin);
  std::vector<std::uint64_t> ins(nwin, 0);
  for (const auto& r : during) lat[std::min(nwin - 1, static_cast<std::size_t>(r.at_s))].push_back(r.latency_us / 1000.0);
  for (double t : insert_done_at) ++ins[std::min(nwin - 1, static_cast<std::size_t>(t))];
  for (std::size_t w = 0; w + 1 < nwin; ++w) {  // the last window is partial
    windows.push_back({{"t", w}, {"inserts", ins[w]}, {"qps", lat[w].size()},
                       {"p90_ms", Percentile(lat[w], 0.90)}, {"p99_ms", Percentile(lat[w], 0.99)}});
  }
  out["windows"] = windows;
  // Recall per tenth of the inserts.
  nlohmann::json tenths = nlohmann::json::array();
  const std::uint64_t step = std::max<std::uint64_t>(1, (cfg.end - cfg.start) / 10);
  for (std::uint64_t b = cfg.start; b < cfg.end; b += step) {
    std::vector<const SearchRecord*> in;
    for (const auto& r : during) {
      if (r.rows >= b && r.rows < b + step) in.push_back(&r);
    }
    if (in.empty()) continue;
    const GroundTruth gt = Exact(*base, b, *queries, cfg.k);
    tenths.push_back({{"rows_from", b}, {"searches", in.size()}, {"recall_at_10", Recall(in, gt, cfg.k)}});
    std::cerr << tenths.back().dump() << "\n";
  }
  out["recall_during"] = tenths;
  const GroundTruth gt_end = Exact(*base, cfg.end, *queries, cfg.k);
  out["search_only_after"] =
      SearchOnly((*graph)->index(), *queries, cfg, cfg.end, gt_end, base_of.get());
  std::cerr << out["search_only_after"].dump() << "\n";
  if (!cfg.fresh_index.empty()) {
    OpenOptions open;
    open.decoupled_dir = cfg.fresh_decoupled;
    auto fresh = Index::Open(cfg.fresh_index, open);
    Check(fresh.status(), "fresh index");
    out["fresh_build"] = SearchOnly(**fresh, *queries, cfg, cfg.end, gt_end);
    std::cerr << out["fresh_build"].dump() << "\n";
  }
  out["loadavg_end"] = LoadAvg();
  std::ofstream(cfg.json) << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) {
  strata::bench::Config cfg;
  CLI::App app{"In-place inserts on the decoupled graph layout beside searches"};
  app.add_option("--index", cfg.index, "Graph index built from the first --start rows")->required();
  app.add_option("--decoupled", cfg.decoupled, "Its decoupled layout (strata decouple)")->required();
  app.add_option("--base", cfg.base, "All base vectors (float32)")->required();
  app.add_option("--queries", cfg.queries, "Queries")->required();
  app.add_option("--start", cfg.start, "Rows the index holds")->required();
  app.add_option("--end", cfg.end, "Insert rows up to here")->required();
  app.add_option("--L", cfg.L, "Search list size");
  app.add_option("--search-threads", cfg.search_threads, "Search threads");
  app.add_option("--insert-L", cfg.insert_L, "Position seeking's list size");
  app.add_option("--exact-neighbours", cfg.exact_neighbours, "Candidates re-ranked while seeking");
  app.add_option("--back-edges", cfg.back_edges, "Back-edges an insert adds (0: every out-neighbour)");
  app.add_option("--insert-W", cfg.insert_W, "Position seeking's beam width");
  app.add_option("--insert-threads", cfg.insert_threads, "Inserting threads");
  app.add_option("--hot-page-heat", cfg.hot_page_heat,
                 "Rewrite cached edge pages at least this hot whole (0: never)");
  app.add_flag("--no-entrance", cfg.no_entrance, "Keep the MemGraph as built (no live entrance graph)");
  app.add_option("--rerank-group", cfg.rerank_group,
                 "Searches' speculative re-rank group (0: the whole list)");
  app.add_option("--cache-mib", cfg.cache_mib, "Hot edge-page cache (MiB; 0: none)");
  app.add_option("--cache-policy", cfg.cache_policy, "navis, lru, clock or lfu");
  app.add_option("--search-seconds", cfg.search_seconds, "Search-only phases' length");
  app.add_option("--fresh-index", cfg.fresh_index, "A one-pass build of all --end rows");
  app.add_option("--fresh-decoupled", cfg.fresh_decoupled, "Its decoupled layout");
  app.add_option("--json", cfg.json, "Output")->required();
  CLI11_PARSE(app, argc, argv);
  return strata::bench::Main(cfg);
}
