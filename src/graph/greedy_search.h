// Greedy (best-first) search over an in-memory graph with full-precision
// distances: DiskANN's iterate_to_fixed_point / the Vamana paper's Algorithm 1.
//
// Starting from the entry points, repeatedly expand the nearest candidate not
// yet expanded (score all its unvisited neighbours), keeping the best
// `list_size` (L) candidates, until every candidate in the list is expanded.
// Used by the Vamana build (with the expanded set as the prune pool), by
// tests, and later by the in-memory navigation graph (MemGraph).
#ifndef STRATA_GRAPH_GREEDY_SEARCH_H_
#define STRATA_GRAPH_GREEDY_SEARCH_H_

#include <cstdint>
#include <span>
#include <vector>

#include "graph/adjacency.h"
#include "graph/neighbor.h"
#include "graph/spin_lock.h"
#include "graph/vector_view.h"
#include "graph/visited_set.h"

namespace strata::graph {

// Work done by one search.
struct SearchCounters {
  std::uint32_t hops = 0;                   // nodes expanded
  std::uint64_t distance_computations = 0;  // query-to-node distances computed
};

// Which nodes a filtered search may score and expand. Gollapudi et al.,
// "Filtered-DiskANN: Graph Algorithms for Approximate Nearest Neighbor Search
// with Filters", WWW 2023 (FilteredGreedySearch): a neighbour that fails is
// never added to the candidate list, so the walk stays among passing nodes.
class NodePredicate {
 public:
  virtual ~NodePredicate() = default;
  virtual bool Accept(NodeId node) const = 0;
};

// A reusable searcher: holds the candidate list and visited set, so repeated
// searches allocate nothing. Not thread-safe: use one per thread. The graph
// and vectors are borrowed and must outlive the searcher.
class GraphSearcher {
 public:
  // `locks`: when non-null (size graph.size()), node i's list is read under
  // locks[i] — needed while other threads modify the graph (the build). Null
  // for a finished graph.
  GraphSearcher(const VectorView& vectors, const FlatAdjacency& graph,
                SpinLock* locks = nullptr);

  // Searches for `query` (vectors.dim() floats) from `entry_points` (valid
  // ids; duplicates ignored) with candidate list size `list_size` (>= 1).
  // If `expanded` is non-null it receives every expanded node with its
  // distance, in expansion order (the build's prune pool).
  // With `accept`, only neighbours it accepts are scored (entry points are
  // taken as given).
  // Afterwards Results() holds the best min(list_size, reachable) candidates.
  SearchCounters Search(const float* query, std::span<const NodeId> entry_points,
                        std::uint32_t list_size, std::vector<Neighbor>* expanded = nullptr,
                        const NodePredicate* accept = nullptr);

  // The final candidate list of the last Search, nearest first.
  const CandidateList& Results() const { return candidates_; }
  // Copies the first min(k, Results().size()) results into ids / distances
  // (either may be null), resized to that count.
  void TopK(std::uint32_t k, std::vector<NodeId>* ids, std::vector<float>* distances) const;
  // Ids scored during the last Search (entry points and every neighbour of
  // an expanded node).
  const VisitedSet& Visited() const { return visited_; }

 private:
  const VectorView& vectors_;
  const FlatAdjacency& graph_;
  SpinLock* locks_;
  CandidateList candidates_;
  VisitedSet visited_;
  std::vector<NodeId> neighbors_;  // copy of the list being expanded
  std::vector<NodeId> fresh_;      // its unvisited members
};

// Result of a one-off GreedySearch.
struct GreedySearchResult {
  std::vector<NodeId> ids;       // up to k, nearest first
  std::vector<float> distances;  // same order; metric distances (see vector_view.h)
  std::uint32_t hops = 0;
  std::uint64_t distance_computations = 0;
};

// One-off search (allocates a GraphSearcher). InvalidArgument if query.size()
// != vectors.dim(), the graph and vectors differ in size, k or list_size is 0,
// or the entry point is out of range. The list size used is max(list_size, k).
Result<GreedySearchResult> GreedySearch(const VectorView& vectors, const FlatAdjacency& graph,
                                        NodeId entry_point, std::span<const float> query,
                                        std::uint32_t list_size, std::uint32_t k);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_GREEDY_SEARCH_H_
