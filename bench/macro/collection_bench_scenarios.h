// The collection_bench scenarios (what each measures: collection_bench.cc's
// opening comment). Each prints its rows as JSON lines; see each for where
// the rows are recorded.
#ifndef STRATA_BENCH_MACRO_COLLECTION_BENCH_SCENARIOS_H_
#define STRATA_BENCH_MACRO_COLLECTION_BENCH_SCENARIOS_H_

#include "collection_bench_util.h"

namespace strata::bench {

// inserts: batch and single upsert throughput and latency per durability and
// writer count (collection_bench_inserts.cc). Returns the rows.
json RunInserts(const Config& cfg, const Data& d);

// pending, merge_qps and deletes, which share one loaded collection
// (collection_bench_pending.cc). Returns the pending rows; the merge_qps and
// deletes rows go to *mq_out and *del_out when those are selected.
json RunPending(const Config& cfg, const Data& d, bool pending, bool merge_qps, bool deletes,
                json* mq_out, json* del_out);

// merge_time: streaming merge vs full rebuild of the same live set
// (collection_bench_merges.cc). Rows go to Emit("merge_time", ...).
void RunMergeTime(const Config& cfg, const Data& d);

// live_build: background merges while loading vs a one-pass build
// (collection_bench_merges.cc). Rows go to Emit("live_build", ...).
void RunLiveBuild(const Config& cfg, const Data& d);

}  // namespace strata::bench

#endif  // STRATA_BENCH_MACRO_COLLECTION_BENCH_SCENARIOS_H_
