// collection_bench's merge scenarios: merge_time (the StreamingMerge of
// Singh et al., "FreshDiskANN: A Fast and Accurate Graph-Based ANN Index for
// Streaming Similarity Search", against a full rebuild of the same live set)
// and live_build (background merges while loading against a one-pass build).
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
    auto c = OpenFresh(dir_s, cfg, d, Durability::kAsync, mt, kNoThreshold);
    auto t0 = Clock::now();
    LoadRows(*c, d, 0, n, 10000);
    const double load_s = Seconds(t0, Clock::now());
    const double idle_s = WaitIdle();
    const double build_s = TimedMerge(*c, "merge (one-pass build)");
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
    auto c = Reopen(dir, mt, "reopen " + dir,
                    [&](CollectionOptions& o) { o.streaming_merge = streaming; });
    const double idle_s = WaitIdle();
    const CollectionStats before = c->Stats();
    const double cpu0 = ProcessCpuSeconds();
    secs[mode] = TimedMerge(*c, "merge");
    const double cpu = ProcessCpuSeconds() - cpu0;
    const CollectionStats after = c->Stats();
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
    auto c = OpenFresh(dir, cfg, d, Durability::kAsync, lmt, 0,
                       [](CollectionOptions& o) { o.background_merge = true; });
    // Monitor: one row per merge completion (Stats().merges changes).
    std::atomic<bool> stop{false};
    json timeline = json::array();
    const auto t0 = Clock::now();
    std::thread mon([&] {
      std::uint64_t last = 0;
      while (!stop) {
        const CollectionStats st = c->Stats();
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
    const CollectionStats at_insert_end = c->Stats();
    Check(c->WaitForMerge(), "wait for merge");
    const double wait_s = Seconds(t0, Clock::now());
    const CollectionStats before_final = c->Stats();
    Check(c->Merge(), "final merge");
    const double total_s = Seconds(t0, Clock::now());
    stop = true;
    mon.join();
    const CollectionStats st = c->Stats();
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
    auto c = OpenFresh(dir, cfg, d, Durability::kAsync, mt, kNoThreshold);
    const auto t0 = Clock::now();
    LoadRows(*c, d, 0, n, cfg.batch);
    const double load_s = Seconds(t0, Clock::now());
    // Merge right away (the indexer may still be graphing the pending set:
    // it competes for the cores, as it does in the live build).
    const double merge_s = TimedMerge(*c, "one-pass merge");
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

}  // namespace strata::bench
