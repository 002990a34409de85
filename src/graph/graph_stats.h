// Structural statistics and reachability of an in-memory graph.
#ifndef STRATA_GRAPH_GRAPH_STATS_H_
#define STRATA_GRAPH_GRAPH_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/adjacency.h"
#include "graph/neighbor.h"

namespace strata::graph {

struct GraphStats {
  std::uint64_t num_nodes = 0;
  std::uint64_t num_edges = 0;        // sum of out-degrees
  double avg_degree = 0.0;            // num_edges / num_nodes
  std::uint32_t max_degree = 0;       // largest out-degree
  std::uint32_t min_degree = 0;       // smallest out-degree
  std::uint64_t zero_degree_nodes = 0;
  std::uint64_t self_loops = 0;       // edges i -> i
  std::uint64_t duplicate_edges = 0;  // repeated ids within one list
  std::uint64_t invalid_edges = 0;    // ids >= num_nodes
  std::uint64_t unreachable = 0;      // nodes not reachable from the entry point (BFS)

  // One line: "nodes=... edges=... avg_degree=... max_degree=... unreachable=...".
  std::string ToString() const;
};

// Reachability from `entry` by BFS over out-edges: result[i] = 1 iff node i is
// reachable (entry itself included). Invalid ids (>= size) are ignored. An
// out-of-range entry reaches nothing. O(n + edges) time, n bytes.
std::vector<std::uint8_t> ReachableFrom(const FlatAdjacency& graph, NodeId entry);

// Degree statistics, list sanity counts and unreachable count from `entry`.
GraphStats ComputeGraphStats(const FlatAdjacency& graph, NodeId entry);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_GRAPH_STATS_H_
