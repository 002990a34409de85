// The expected-state model of collection_crash_harness, after rocksdb's
// db_crashtest.py expected-state oracle: what the acknowledged writes say the
// collection holds, the state file that hands it to the child, the batches
// parsed from the pipe (crash_common.h: the protocol) and applying them.
#ifndef STRATA_TESTS_CRASH_CRASH_MODEL_H_
#define STRATA_TESTS_CRASH_CRASH_MODEL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "crash_common.h"
#include "strata/collection.h"

namespace strata::crash {

// The model: what the acknowledged writes say the collection holds.
struct Model {
  std::uint64_t next_id = 1;                  // the next never-used id
  std::uint64_t next_batch = 1;               // the next never-used batch number
  std::map<VectorId, std::uint64_t> live;     // id -> version (batch that wrote it)
  std::map<VectorId, std::uint64_t> dead;     // deleted id -> its version before the delete
  std::map<VectorId, std::uint64_t> dead_in;  // deleted id -> batch that deleted it
};

// Writes the model's ids, versions and counters to `path` (atomically: a
// temporary file renamed). dead_in stays with the parent.
Status SaveModel(const Model& m, const std::string& path);
Result<Model> LoadModel(const std::string& path);

// One batch of the protocol, from its intent line or its acknowledgement.
struct Batch {
  std::uint64_t no = 0;
  char kind = 0;  // 'U', 'D', 'M'
  bool crosses = false;
  std::vector<std::pair<VectorId, std::uint64_t>> items;  // (id, version); version 0 for D
};

// Parses "B n K flag items..." (intent) or "K n [existed] items..." (ack).
bool ParseBatch(const std::string& line, bool intent, Batch* b, std::uint64_t* existed);

// Applies an acknowledged (or resolved in-flight) batch to the model.
void ApplyBatch(Model* m, const Batch& b);

// "U batch 12 (5 ids)", for messages.
std::string Describe(const Batch& b);

// recall@kK of `results` against brute force over the model's live vectors.
double Recall(const std::vector<std::vector<SearchHit>>& results,
              const std::vector<std::vector<float>>& queries, const Model& m);

}  // namespace strata::crash

#endif  // STRATA_TESTS_CRASH_CRASH_MODEL_H_
