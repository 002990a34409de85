// What the collection_bench scenarios share: the configuration, the loaded
// vectors, where result rows go (stdout and the --json file), the columns
// every row carries, opening and loading collections, exact ground truth and
// the recall / QPS / latency sweep over --L.
#ifndef STRATA_BENCH_MACRO_COLLECTION_BENCH_UTIL_H_
#define STRATA_BENCH_MACRO_COLLECTION_BENCH_UTIL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "bench_common.h"
#include "strata/collection.h"
#include "strata/dataset.h"
#include "strata/eval.h"

namespace strata::bench {

using json = nlohmann::json;

struct Config {
  std::string base, queries, dir, json_out, scenarios = "all", dataset;
  std::uint64_t n_merged = 180000, n_pending = 20000, n_small_pending = 2000;
  std::uint64_t insert_batch_vectors = 50000, insert_singles = 5000, batch = 1000;
  std::vector<unsigned> writers{1, 8};
  std::vector<std::string> durabilities{"sync", "async"};
  std::vector<std::uint32_t> Ls{20, 50, 100};  // graph: list sizes; ivf: nprobe
  std::string index_type = "graph";
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
  std::uint64_t lb_n = 0;         // 0 = all base rows
  unsigned lb_merge_threads = 0;  // 0 = nproc
  bool lb_throttle = false;       // writer waits for a running merge after each batch
  bool lb_one_pass = true;        // also build the one-pass comparison
  bool wait_idle = true;          // pending: wait for the indexer before sweeps/merges
};

struct Data {
  VectorMatrix base, queries;
  std::uint32_t dim = 0;
  std::span<const float> row(std::uint64_t i) const { return base.row<float>(i); }
};

// ---------------------------------------------------------------- result rows

// Every row Emit or SavePartial records goes into (*all)[section] and `save`
// rewrites the JSON file, so partial results survive a crash or a kill.
void SetResultSink(json* all, std::function<void()> save);
// Replaces (*all)[section] with `rows` and saves (rows already printed).
void SavePartial(const std::string& section, const json& rows);
// Prints `row` and appends it to (*all)[section], then saves.
void Emit(const std::string& section, const json& row);
// Prints `row` as one JSON line on stdout (flushed: a long run shows progress).
void PrintRow(const json& row);
// PrintRow, then appends `row` to the array `rows`.
void AppendRow(json& rows, const json& row);

// Shared columns of every result row: dataset, dim, machine (nproc, load
// average), peak RSS so far and, with a collection, its Stats().
json Common(const Config& cfg, const Data& d, const Collection* c);

// ---------------------------------------------------------------- collections

// flat_threshold for one-pass builds: never reached while loading.
constexpr std::uint64_t kNoThreshold = 1ull << 62;

// A new, empty collection in `dir` (whatever was there is removed): graph
// index, background_merge off, flat_threshold cfg.flat_threshold unless
// given; `tweak` changes any option last.
std::unique_ptr<Collection> OpenFresh(const std::string& dir, const Config& cfg, const Data& d,
                                      Durability dur, unsigned merge_threads,
                                      std::uint64_t flat_threshold = 0,
                                      const std::function<void(CollectionOptions&)>& tweak = {});

// Reopens the existing collection in `dir` with background_merge off and
// `merge_threads`; `tweak` changes any option last. Dies with `what`.
std::unique_ptr<Collection> Reopen(const std::string& dir, unsigned merge_threads,
                                   const std::string& what,
                                   const std::function<void(CollectionOptions&)>& tweak = {});

// Runs Merge() (dies with `what` if it fails); returns its seconds.
double TimedMerge(Collection& c, const std::string& what);

// Upserts rows [begin, end) of the base (id = row) in batches of `batch`.
void LoadRows(Collection& c, const Data& d, std::uint64_t begin, std::uint64_t end,
              std::uint64_t batch);

// The ids 0 .. n-1.
std::vector<VectorId> Prefix(std::uint64_t n);

// merge_threads of loading merges: --build-threads, or every core.
unsigned BuildThreads(const Config& cfg);

// ---------------------------------------------------------------- search

// Exact k-NN of the queries over `live` (rows of the base, ascending user
// ids); returns ground truth in user ids.
GroundTruth ExactGt(const Config& cfg, const Data& d, const std::vector<VectorId>& live);

// Search parameters at list size L (at least k).
CollectionSearchParams Params(const Config& cfg, std::uint32_t L);

// Recall + QPS (SearchBatch, cfg.threads) + per-query latency (one thread)
// at each --L; one printed row per L, tagged with `phase`.
json SearchSweep(const Config& cfg, const Data& d, const Collection& c, const GroundTruth& gt,
                 const std::string& phase);

}  // namespace strata::bench

#endif  // STRATA_BENCH_MACRO_COLLECTION_BENCH_UTIL_H_
