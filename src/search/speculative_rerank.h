// Convergence-aware speculative re-ranking (NAVIS Algorithm 1; "NAVIS:
// Concurrent Search and Update with Low Position-Seeking Overhead in On-SSD
// Graph-Based Vector Search"): for layouts that keep full vectors apart from
// the graph, where a re-rank costs one vector read per candidate. Instead of
// reading the vector of every candidate (or a fixed 3k of them), read them in
// PQ-distance order in groups of s, keep the exact top-k, and stop as soon as
// a whole group leaves the top-k unchanged. Each group's reads are issued
// before the previous group's exact distances are computed, so I/O and
// compute overlap; the speculative group in flight at the stop is still
// collected (its distances are exact and kept) but no further group is
// issued.
#ifndef STRATA_SEARCH_SPECULATIVE_RERANK_H_
#define STRATA_SEARCH_SPECULATIVE_RERANK_H_

#include <cstdint>
#include <span>
#include <vector>

#include "graph/neighbor.h"
#include "strata/result.h"

namespace strata::search {

// Reads full vectors and returns exact distances, asynchronously: Submit
// starts reading a group, Collect waits for the oldest submitted group and
// writes its exact distances in submission order. At most two groups are in
// flight.
class VectorFetcher {
 public:
  virtual ~VectorFetcher() = default;
  virtual Status Submit(std::span<const graph::NodeId> ids) = 0;
  virtual Status Collect(std::span<float> distances) = 0;
};

struct SpeculativeRerankResult {
  std::vector<graph::Neighbor> top;      // exact top-k, nearest first
  std::vector<graph::Neighbor> exact;    // every candidate whose vector was read
  std::uint32_t groups = 0;              // groups read (including the speculative one)
};

// `candidates` sorted by PQ distance (nearest first); `k` >= 1; `group_size`
// >= 1. Reads at least two groups (or all candidates) unless there are fewer.
// InvalidArgument for k or group_size 0; errors of the fetcher pass through.
Result<SpeculativeRerankResult> SpeculativeRerank(std::span<const graph::Neighbor> candidates,
                                                  std::uint32_t k, std::uint32_t group_size,
                                                  VectorFetcher* fetcher);

}  // namespace strata::search

#endif  // STRATA_SEARCH_SPECULATIVE_RERANK_H_
