// collection_update_bench: a collection that changes while it serves, the
// buffered mode (pending list + merges, FreshDiskANN) against the in-place
// mode (NAVIS), on the same data in one run.
//
// For each --modes entry: a fresh collection whose first build holds rows
// [0, --start) of --base (flat_threshold = --start, so the first index is
// one build), then
//   1. searches only, --search-seconds, on --search-threads threads;
//   2. writers (--insert-threads, batches of --batch) upsert rows
//      [--start, --end) while the searches go on, and delete --deletes
//      rows of the first --start (spread, one batch per --delete-every
//      upserted batches); the phase ends when every write is acknowledged
//      and the index holds it (no pending vector, no merge running; the
//      buffered mode's last vectors, below its merge threshold, merged by
//      an explicit Merge() counted in the time). In
//      place, a writer waits while more than --max-pending vectors are
//      pending (0: never), so an applier that falls behind throttles its
//      writers instead of growing the pending list without bound (the
//      buffered mode's pending list is what its merges drain: never
//      throttled);
//      In place, the deletes' lazy repairs still queued then are worked
//      off before the phase ends (repaired_seconds; the searches and the
//      one-second windows run to there);
//      With --insert-rate R, batches are released on a schedule (row s at
//      (s - start) / R seconds): both modes absorb the same offered load,
//      and the searches' share shows what that load costs each;
//   3. searches only again.
// Reported per mode: the sustained insert rate (rows over the time until
// the index held them all, merges included), the searches' QPS, p50/p90/p99
// and pages per query per phase and per one-second window (the worst
// window's QPS against the mean), recall@10 per tenth of the writes against
// the exact ground truth of the rows acknowledged when that tenth began
// (deleted rows left out), and the collection's RAM, disk and merge count.
// JSON to --json.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "strata/collection.h"
#include "strata/dataset.h"
#include "strata/eval.h"

namespace strata::bench {
namespace {

using json = nlohmann::json;

struct Config {
  std::string base, queries, dir, json_out;
  std::vector<std::string> modes{"buffered", "in_place"};
  std::uint64_t start = 0, end = 0, deletes = 0, delete_every = 10, batch = 100;
  std::uint64_t max_pending = 0;
  double insert_rate = 0;       // offered load, rows/s over all writers (0: as fast as they go)
  std::uint64_t cache_mib = 0;  // the index's cache (node records or edge pages), both modes
  std::uint32_t L = 50, k = 10, search_threads = 1, insert_threads = 1, in_place_threads = 4;
  std::uint32_t in_place_L = 64;
  std::optional<std::uint32_t> back_edges, hot_page_heat;  // unset: the collection's defaults
  bool compaction = true;
  std::uint32_t compaction_pause_ms = CollectionOptions{}.in_place_compaction_pause_ms;
  double search_seconds = 10;
};

struct SearchRecord {
  double at_s;          // since the write phase began (negative: before)
  std::uint64_t acked;  // rows acknowledged when it began
  double latency_ms;
  std::uint32_t pages;
  std::uint32_t cache_hits;  // pages (in place) or node records (buffered) served from RAM
  std::uint32_t reads;       // read requests: edge pages (in place) or nodes (buffered)
  std::uint32_t expanded;    // lists expanded (read, cached or mates on a fetched page)
  std::uint32_t reranked;    // exact distances of the re-rank
  std::uint32_t query;
  std::vector<VectorId> ids;
};

class Searches {
 public:
  Searches(const Collection& c, const VectorMatrix& q, const Config& cfg,
           const std::atomic<std::uint64_t>& acked)
      : c_(c), q_(q), cfg_(cfg), acked_(acked) {}
  void Start(Clock::time_point t0) {
    t0_ = t0;
    stop_ = false;
    for (std::uint32_t t = 0; t < cfg_.search_threads; ++t)
      threads_.emplace_back([this, t] { Run(t); });
  }
  std::vector<SearchRecord> Stop() {
    stop_ = true;
    for (auto& t : threads_) t.join();
    threads_.clear();
    std::vector<SearchRecord> all;
    for (auto& v : parts_) all.insert(all.end(), v.begin(), v.end());
    parts_.clear();
    return all;
  }

 private:
  void Run(std::uint32_t t) {
    CollectionSearchParams p;
    p.index.k = cfg_.k;
    p.index.list_size = cfg_.L;
    std::vector<SearchRecord> mine;
    for (std::uint64_t i = t * 7919; !stop_.load(); ++i) {
      SearchRecord r;
      r.query = static_cast<std::uint32_t>(i % q_.rows());
      r.acked = acked_.load();
      QueryStats s;
      auto hits = c_.Search(q_.row<float>(r.query), p, &s);
      Check(hits.status(), "search");
      for (const SearchHit& h : *hits) r.ids.push_back(h.id);
      r.latency_ms = s.latency_us / 1000.0;
      r.pages = s.pages_read;
      r.cache_hits = s.cache_hits;
      r.reads = s.reads;
      r.expanded = s.expanded;
      r.reranked = s.reranked;
      r.at_s = Seconds(t0_, Clock::now());
      mine.push_back(std::move(r));
    }
    std::lock_guard<std::mutex> lock(mu_);
    parts_.push_back(std::move(mine));
  }
  const Collection& c_;
  const VectorMatrix& q_;
  const Config& cfg_;
  const std::atomic<std::uint64_t>& acked_;
  Clock::time_point t0_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::vector<std::vector<SearchRecord>> parts_;
};

json Summary(const std::vector<const SearchRecord*>& rs, double seconds) {
  std::vector<double> lat;
  double pages = 0, hits = 0, reads = 0, expanded = 0, reranked = 0;
  for (const SearchRecord* r : rs) {
    lat.push_back(r->latency_ms);
    pages += r->pages;
    hits += r->cache_hits;
    reads += r->reads;
    expanded += r->expanded;
    reranked += r->reranked;
  }
  const double n = rs.empty() ? 1.0 : static_cast<double>(rs.size());
  return {{"searches", rs.size()},
          {"qps", seconds > 0 ? rs.size() / seconds : 0},
          {"p50_ms", Percentile(lat, 0.5)},
          {"p90_ms", Percentile(lat, 0.9)},
          {"p99_ms", Percentile(lat, 0.99)},
          {"pages_per_query", pages / n},
          // In place: edge pages read; the rest of the pages are vector
          // sectors of the re-rank.
          {"reads_per_query", reads / n},
          {"expanded_per_query", expanded / n},
          {"reranked_per_query", reranked / n},
          {"cache_hit_rate", pages + hits > 0 ? hits / (pages + hits) : 0}};
}

// Exact ground truth over rows [0, rows) less the deleted ones.
GroundTruth Exact(const VectorMatrix& base, std::uint64_t rows, const VectorMatrix& queries,
                  std::uint32_t k, const std::vector<std::uint8_t>& deleted) {
  ExactKnnOptions o;
  o.k = k;
  o.threads = 2;
  o.accept = [&](std::size_t, VectorId id) { return id >= deleted.size() || !deleted[id]; };
  auto gt = ComputeGroundTruth(ElementType::kFloat32, base.bytes(), rows, queries.bytes(),
                               queries.rows(), base.dim(), o);
  Check(gt.status(), "ground truth");
  return std::move(*gt);
}

double Recall(const std::vector<const SearchRecord*>& rs, const GroundTruth& gt, std::uint32_t k) {
  if (rs.empty()) return 0;
  double hits = 0;
  for (const SearchRecord* r : rs) {
    const auto truth = gt.ids_of(r->query);
    for (VectorId id : r->ids)
      hits += std::find(truth.begin(), truth.begin() + k, id) != truth.begin() + k;
  }
  return hits / (static_cast<double>(rs.size()) * k);
}

void Load(Collection& c, const VectorMatrix& base, std::uint64_t from, std::uint64_t to,
          std::uint64_t batch) {
  std::vector<VectorId> ids;
  for (std::uint64_t s = from; s < to; s += batch) {
    const std::uint64_t e = std::min(to, s + batch);
    ids.resize(e - s);
    for (std::uint64_t i = s; i < e; ++i) ids[i - s] = i;
    Check(c.Upsert(ids, std::span<const float>(base.row<float>(s).data(), (e - s) * base.dim())),
          "upsert");
  }
}

json RunMode(const Config& cfg, const std::string& mode, const VectorMatrix& base,
             const VectorMatrix& queries) {
  const std::string dir = cfg.dir + "/" + mode;
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  CollectionOptions o;
  o.dim = base.dim();
  o.metric = Metric::kL2;
  o.flat_threshold = cfg.start;
  // "in_place_packed": the in-place mode on the packed baseline layout
  // (edge slots that carry their vectors; OdinANN-like).
  o.in_place_packed_baseline = mode == "in_place_packed";
  o.update_mode = o.in_place_packed_baseline ? UpdateMode::kInPlace : *ParseUpdateMode(mode);
  const bool in_place = o.update_mode == UpdateMode::kInPlace;
  o.in_place_threads = cfg.in_place_threads;
  o.in_place_L = cfg.in_place_L;
  if (cfg.back_edges) o.in_place_back_edges = *cfg.back_edges;
  if (cfg.hot_page_heat) o.in_place_hot_page_heat = *cfg.hot_page_heat;
  o.in_place_compaction = cfg.compaction;
  o.in_place_compaction_pause_ms = cfg.compaction_pause_ms;
  o.open.cache_mib = cfg.cache_mib;
  auto opened = Collection::Open(dir, o);
  Check(opened.status(), "open");
  Collection& c = **opened;
  std::cerr << mode << ": loading " << cfg.start << " rows\n";
  const auto tl = Clock::now();
  Load(c, base, 0, cfg.start, 10000);
  json out = {{"mode", mode}, {"first_build_seconds", Seconds(tl, Clock::now())}};
  std::vector<std::uint8_t> deleted(cfg.end, 0);
  std::atomic<std::uint64_t> acked{cfg.start};

  // 1. Searches only.
  Searches load(c, queries, cfg, acked);
  auto t0 = Clock::now();
  load.Start(t0);
  std::this_thread::sleep_for(std::chrono::duration<double>(cfg.search_seconds));
  auto before = load.Stop();
  {
    std::vector<const SearchRecord*> all;
    for (const auto& r : before) all.push_back(&r);
    out["search_only_before"] = Summary(all, Seconds(t0, Clock::now()));
    out["search_only_before"]["recall_at_10"] =
        Recall(all, Exact(base, cfg.start, queries, cfg.k, deleted), cfg.k);
    std::cerr << out["search_only_before"].dump() << "\n";
  }

  // 2. Writes beside the searches.
  std::vector<std::uint64_t> delete_order;
  for (std::uint64_t i = 0; i < cfg.deletes; ++i) {
    delete_order.push_back((i * 2654435761ull) % cfg.start);
  }
  std::sort(delete_order.begin(), delete_order.end());
  delete_order.erase(std::unique(delete_order.begin(), delete_order.end()), delete_order.end());
  std::mutex del_mu;
  std::size_t next_delete = 0;
  const std::uint64_t batches = (cfg.end - cfg.start + cfg.batch - 1) / cfg.batch;
  const std::uint64_t per_delete = std::max<std::uint64_t>(
      1, delete_order.size() / std::max<std::uint64_t>(1, batches / cfg.delete_every));
  std::vector<std::pair<double, std::uint64_t>> acked_at;  // (time, rows acknowledged)
  std::mutex acked_mu;
  std::atomic<std::uint64_t> next{cfg.start}, batches_done{0};
  t0 = Clock::now();
  load.Start(t0);
  const bool throttle = cfg.max_pending > 0 && in_place;
  const std::uint64_t written_before = ProcessWriteBytes();
  auto writer = [&] {
    std::vector<VectorId> ids;
    for (std::uint64_t s = next.fetch_add(cfg.batch); s < cfg.end; s = next.fetch_add(cfg.batch)) {
      while (throttle && c.Stats().pending > cfg.max_pending) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // Stats() lists the files
      }
      if (cfg.insert_rate > 0) {
        // Offered load: batch s is due (s - start) / rate seconds in.
        std::this_thread::sleep_until(
            t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                     static_cast<double>(s - cfg.start) / cfg.insert_rate)));
      }
      const std::uint64_t e = std::min(cfg.end, s + cfg.batch);
      ids.resize(e - s);
      for (std::uint64_t i = s; i < e; ++i) ids[i - s] = i;
      Check(c.Upsert(ids, std::span<const float>(base.row<float>(s).data(), (e - s) * base.dim())),
            "upsert");
      const std::uint64_t done = acked.fetch_add(e - s) + (e - s);
      {
        std::lock_guard<std::mutex> lock(acked_mu);
        acked_at.emplace_back(Seconds(t0, Clock::now()), done);
      }
      if (++batches_done % cfg.delete_every == 0) {
        std::vector<VectorId> gone;
        {
          std::lock_guard<std::mutex> lock(del_mu);
          for (std::uint64_t j = 0; j < per_delete && next_delete < delete_order.size(); ++j) {
            gone.push_back(delete_order[next_delete]);
            deleted[delete_order[next_delete++]] = 1;
          }
        }
        if (!gone.empty()) Check(c.Delete(gone).status(), "delete");
      }
    }
  };
  std::vector<std::thread> writers;
  for (std::uint32_t t = 0; t < cfg.insert_threads; ++t) writers.emplace_back(writer);
  for (auto& w : writers) w.join();
  const double acked_s = Seconds(t0, Clock::now());
  // Drained: everything in the index. The buffered mode merges what is left
  // below its merge threshold now (a merge is what puts it in the index);
  // in place, the applier empties the pending list by itself.
  if (!in_place) Check(c.Merge(), "merge");
  while (true) {
    const CollectionStats s = c.Stats();
    if (s.pending == 0 && !s.merging) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double drained_s = Seconds(t0, Clock::now());
  const CollectionStats st = c.Stats();
  // In place, deletes are re-linked lazily (IP-DiskANN): the backlog left
  // when the inserts are all in is worked off before the searches-only
  // phase, its time reported apart (the buffered mode's merges did their
  // deletes' work within indexed_seconds).
  while (c.Stats().in_place_repairs_queued > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const double repaired_s = Seconds(t0, Clock::now());
  // In place, the applier repacks sparse edge pages once writes have
  // paused for a second: the searches-only phase waits until it has settled
  // (no compaction for three seconds; at most 10 minutes), its time
  // reported apart.
  if (in_place) {
    std::uint64_t last = c.Stats().in_place_compactions;
    for (int quiet = 0; quiet < 6 && Seconds(t0, Clock::now()) < repaired_s + 600;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      const std::uint64_t now = c.Stats().in_place_compactions;
      quiet = now == last ? quiet + 1 : 0;
      last = now;
    }
  }
  const double compacted_s = Seconds(t0, Clock::now());
  auto during = load.Stop();
  const std::uint64_t written_after = ProcessWriteBytes();
  const CollectionStats repaired = c.Stats();
  const double n = static_cast<double>(cfg.end - cfg.start);
  out["writes"] = {{"inserted", cfg.end - cfg.start},
                   {"deleted", next_delete},
                   {"acknowledged_seconds", acked_s},
                   {"indexed_seconds", drained_s},
                   {"sustained_inserts_per_second", n / drained_s},
                   {"merges", st.merges},
                   {"in_place_inserts", st.in_place_inserts},
                   {"in_place_repairs_at_indexed", st.in_place_repairs},
                   {"in_place_repairs_queued_at_indexed", st.in_place_repairs_queued},
                   {"in_place_repairs", repaired.in_place_repairs},
                   {"in_place_compactions", repaired.in_place_compactions},
                   {"in_place_edge_pages", repaired.in_place_edge_pages},
                   {"in_place_live_edge_pages", repaired.in_place_live_edge_pages},
                   {"in_place_insert_bytes_per_insert",
                    static_cast<double>(st.in_place_insert_bytes_written) / n},
                   {"in_place_lists_per_insert",
                    static_cast<double>(st.in_place_insert_lists_changed) / n},
                   // A packed layout updated page by page, as OdinANN's is:
                   // each changed list's 4 KiB page rewritten whole, with
                   // the records beside it, and the new vertex's (a model).
                   {"page_per_list_model_bytes_per_insert",
                    4096.0 * static_cast<double>(st.in_place_insert_lists_changed) / n},
                   {"in_place_upkeep_bytes_written", repaired.in_place_upkeep_bytes_written},
                   // Everything the process wrote to storage from the first
                   // write to the settled index (merges, RocksDB, graph).
                   {"process_bytes_written_per_insert",
                    static_cast<double>(written_after - written_before) / n},
                   {"repaired_seconds", repaired_s},
                   {"sustained_with_repairs_per_second", n / repaired_s},
                   {"compacted_seconds", compacted_s},
                   {"ram_mib", st.ram_bytes / 1048576.0},
                   {"disk_mib", st.disk_bytes / 1048576.0},
                   {"peak_rss_mib", PeakRssMiB()}};
  std::cerr << out["writes"].dump() << "\n";
  {
    std::vector<const SearchRecord*> all;
    for (const auto& r : during) all.push_back(&r);
    out["during_writes"] = Summary(all, repaired_s);
  }
  // One-second windows.
  const auto nwin = static_cast<std::size_t>(repaired_s);
  json windows = json::array();
  std::vector<std::vector<const SearchRecord*>> win(nwin + 1);
  for (const auto& r : during) win[std::min(nwin, static_cast<std::size_t>(r.at_s))].push_back(&r);
  double mean = 0, worst = 1e18;
  for (std::size_t w = 0; w < nwin; ++w) {
    json j = Summary(win[w], 1.0);
    j["t"] = w;
    mean += j["qps"].get<double>();
    worst = std::min(worst, j["qps"].get<double>());
    windows.push_back(j);
  }
  out["windows"] = windows;
  out["window_qps_mean"] = nwin ? mean / nwin : 0;
  out["window_qps_worst"] = nwin ? worst : 0;
  // Recall per tenth of the writes (by rows acknowledged at the search's start).
  json tenths = json::array();
  const std::uint64_t step = std::max<std::uint64_t>(1, (cfg.end - cfg.start) / 10);
  for (std::uint64_t b = cfg.start; b < cfg.end; b += step) {
    std::vector<const SearchRecord*> in;
    for (const auto& r : during) {
      if (r.acked >= b && r.acked < b + step) in.push_back(&r);
    }
    if (in.empty()) continue;
    // Deletes made before this tenth began (they go at a steady pace).
    std::vector<std::uint8_t> gone(cfg.end, 0);
    const std::uint64_t dels = next_delete * (b - cfg.start) / (cfg.end - cfg.start);
    for (std::uint64_t j = 0; j < dels; ++j) gone[delete_order[j]] = 1;
    tenths.push_back({{"rows_from", b},
                      {"searches", in.size()},
                      {"recall_at_10", Recall(in, Exact(base, b, queries, cfg.k, gone), cfg.k)}});
    std::cerr << tenths.back().dump() << "\n";
  }
  out["recall_during"] = tenths;

  // 3. Searches only again.
  t0 = Clock::now();
  load.Start(t0);
  std::this_thread::sleep_for(std::chrono::duration<double>(cfg.search_seconds));
  auto after = load.Stop();
  {
    std::vector<const SearchRecord*> all;
    for (const auto& r : after) all.push_back(&r);
    out["search_only_after"] = Summary(all, Seconds(t0, Clock::now()));
    out["search_only_after"]["recall_at_10"] =
        Recall(all, Exact(base, cfg.end, queries, cfg.k, deleted), cfg.k);
    std::cerr << out["search_only_after"].dump() << "\n";
  }
  Check(c.Close(), "close");
  return out;
}

int Main(const Config& cfg) {
  auto base = ReadVectorsAsFloat(cfg.base);
  Check(base.status(), "base");
  auto queries = ReadVectorsAsFloat(cfg.queries);
  Check(queries.status(), "queries");
  if (cfg.end > base->rows() || cfg.start == 0 || cfg.start >= cfg.end || cfg.deletes > cfg.start) {
    Die("rows", Status::InvalidArgument("need 0 < start < end <= base rows, deletes <= start"));
  }
  json out;
  out["config"] = {{"base", cfg.base},
                   {"start", cfg.start},
                   {"end", cfg.end},
                   {"deletes", cfg.deletes},
                   {"batch", cfg.batch},
                   {"L", cfg.L},
                   {"k", cfg.k},
                   {"search_threads", cfg.search_threads},
                   {"insert_threads", cfg.insert_threads},
                   {"in_place_threads", cfg.in_place_threads},
                   {"in_place_L", cfg.in_place_L},
                   {"back_edges", cfg.back_edges.value_or(CollectionOptions{}.in_place_back_edges)},
                   {"hot_page_heat", cfg.hot_page_heat.value_or(CollectionOptions{}.in_place_hot_page_heat)},
                   {"compaction", cfg.compaction},
                   {"compaction_pause_ms", cfg.compaction_pause_ms},
                   {"max_pending", cfg.max_pending},
                   {"insert_rate", cfg.insert_rate},
                   {"cache_mib", cfg.cache_mib},
                   {"nproc", std::thread::hardware_concurrency()},
                   {"loadavg_start", LoadAvg()}};
  out["modes"] = json::array();
  for (const std::string& mode : cfg.modes) {
    out["modes"].push_back(RunMode(cfg, mode, *base, *queries));
    std::ofstream(cfg.json_out) << out.dump(1) << "\n";  // each mode as soon as it is done
  }
  out["loadavg_end"] = LoadAvg();
  std::ofstream(cfg.json_out) << out.dump(1) << "\n";
  return 0;
}

}  // namespace
}  // namespace strata::bench

int main(int argc, char** argv) {
  strata::bench::Config cfg;
  CLI::App app{"A collection taking inserts and deletes while it serves: buffered vs in place"};
  app.add_option("--base", cfg.base, "Base vectors (float32)")->required();
  app.add_option("--queries", cfg.queries, "Queries")->required();
  app.add_option("--dir", cfg.dir, "Scratch directory")->required();
  app.add_option("--json", cfg.json_out, "Output")->required();
  app.add_option("--modes", cfg.modes,
                 "buffered, in_place, in_place_packed (the packed in-place baseline)")
      ->delimiter(',');
  app.add_option("--start", cfg.start, "Rows of the first build")->required();
  app.add_option("--end", cfg.end, "Upsert rows up to here")->required();
  app.add_option("--deletes", cfg.deletes, "Rows of the first build deleted during the writes");
  app.add_option("--delete-every", cfg.delete_every, "Upserted batches per delete batch");
  app.add_option("--batch", cfg.batch, "Rows per upsert");
  app.add_option("--max-pending", cfg.max_pending,
                 "Writers wait above this many pending (0: never)");
  app.add_option("--insert-rate", cfg.insert_rate,
                 "Offered load: rows/s over all writers, each batch released on schedule "
                 "(0: as fast as they go)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--L", cfg.L, "Search list size");
  app.add_option("--search-threads", cfg.search_threads, "Search threads");
  app.add_option("--insert-threads", cfg.insert_threads, "Writer threads");
  app.add_option("--in-place-threads", cfg.in_place_threads, "Applier threads (in place)");
  app.add_option("--in-place-L", cfg.in_place_L, "Position seeking's list size (in place)");
  app.add_option("--back-edges", cfg.back_edges,
                 "Back-edges an insert adds (in place; 0: every out-neighbour; default: the collection's)");
  app.add_option("--hot-page-heat", cfg.hot_page_heat,
                 "Rewrite cached edge pages at least this hot whole (in place; 0: never; default: the collection's)");
  app.add_option("--compaction", cfg.compaction, "Keep edge pages full (in place): 1 or 0");
  app.add_option("--compaction-pause-ms", cfg.compaction_pause_ms,
                 "How long writes pause before compaction packs pages fully (in place)");
  app.add_option("--cache-mib", cfg.cache_mib,
                 "Index cache in MiB: hot node records (buffered), hot edge pages (in place)");
  app.add_option("--search-seconds", cfg.search_seconds, "Search-only phases' length");
  CLI11_PARSE(app, argc, argv);
  return strata::bench::Main(cfg);
}
