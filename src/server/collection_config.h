// The collection options a client chooses through the API: our own knobs
// under the `strata` key of `PUT /collections/{name}` (Qdrant ignores keys it
// does not know; we reject them by name), and the ones kept beside a served
// collection so that a restart opens it as it was created.
#ifndef STRATA_SERVER_COLLECTION_CONFIG_H_
#define STRATA_SERVER_COLLECTION_CONFIG_H_

#include <nlohmann/json.hpp>

#include "strata/collection.h"
#include "strata/status.h"

namespace strata::server {

// Applies `strata` (an object) to `o`:
//   index: "graph" | "ivf"; update_mode: "buffered" | "in_place";
//   durability: "sync" | "async"; flat_threshold, merge_pending_count,
//   memory_budget_bytes: unsigned; merge_pending_ratio: number >= 0;
//   graph: {R, L, alpha, pq_bytes, passes}; ivf: {clusters, bits, prefix_bits,
//   kmeans_iterations}.
// InvalidArgument naming the first unknown key or ill-typed value; the
// values' ranges are checked by Collection::Open (GraphBuildOptions::Validate).
Status ApplyStrataOptions(const nlohmann::json& strata, CollectionOptions* o);

// The per-open options (Collection stores only its creation fields): what
// ApplyStrataOptions sets that a reopen needs again, and max_batch.
nlohmann::json OpenOptionsJson(const CollectionOptions& o);
// Reads them back into `o`; fields absent keep o's values.
Status ApplyOpenOptionsJson(const nlohmann::json& j, CollectionOptions* o);

}  // namespace strata::server

#endif  // STRATA_SERVER_COLLECTION_CONFIG_H_
