// collection_bench's inserts scenario: upsert throughput and latency of fresh
// collections, batch calls and one id per call, per durability and writer
// thread count.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <thread>
#include <vector>

#include "collection_bench_scenarios.h"

namespace strata::bench {

json RunInserts(const Config& cfg, const Data& d) {
  json out = json::array();
  const std::uint64_t need = 2 * cfg.flat_threshold + cfg.insert_batch_vectors + cfg.insert_singles;
  if (need > d.base.rows()) {
    std::cerr << "inserts: base too small (" << need << " rows needed)\n";
    std::exit(1);
  }
  for (const std::string& dname : cfg.durabilities) {
    auto dur = ParseDurability(dname);
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
              std::span<const float> v(d.base.values<float>().data() + s * d.dim, (e - s) * d.dim);
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
      AppendRow(out, j);
      Check(c->Close(), "close");
      c.reset();
      std::filesystem::remove_all(dir);
    }
  }
  return out;
}

}  // namespace strata::bench
