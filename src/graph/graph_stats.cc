#include "graph/graph_stats.h"

#include <algorithm>
#include <cstdio>

namespace strata::graph {

std::string GraphStats::ToString() const {
  char buf[320];
  std::snprintf(buf, sizeof(buf),
                "nodes=%llu edges=%llu avg_degree=%.2f max_degree=%u min_degree=%u "
                "zero_degree=%llu unreachable=%llu self_loops=%llu duplicates=%llu invalid=%llu",
                static_cast<unsigned long long>(num_nodes),
                static_cast<unsigned long long>(num_edges), avg_degree, max_degree, min_degree,
                static_cast<unsigned long long>(zero_degree_nodes),
                static_cast<unsigned long long>(unreachable),
                static_cast<unsigned long long>(self_loops),
                static_cast<unsigned long long>(duplicate_edges),
                static_cast<unsigned long long>(invalid_edges));
  return buf;
}

std::vector<std::uint8_t> ReachableFrom(const FlatAdjacency& graph, NodeId entry) {
  const NodeId n = graph.size();
  std::vector<std::uint8_t> seen(n, 0);
  if (entry >= n) return seen;
  // The frontier vector doubles as the BFS queue (head index instead of pops).
  std::vector<NodeId> queue;
  queue.reserve(1024);
  queue.push_back(entry);
  seen[entry] = 1;
  for (std::size_t head = 0; head < queue.size(); ++head) {
    for (const NodeId m : graph.Neighbors(queue[head])) {
      if (m < n && !seen[m]) {
        seen[m] = 1;
        queue.push_back(m);
      }
    }
  }
  return seen;
}

GraphStats ComputeGraphStats(const FlatAdjacency& graph, NodeId entry) {
  GraphStats s;
  const NodeId n = graph.size();
  s.num_nodes = n;
  if (n == 0) return s;
  s.min_degree = graph.capacity();
  std::vector<NodeId> sorted;
  for (NodeId i = 0; i < n; ++i) {
    const auto nb = graph.Neighbors(i);
    const auto d = static_cast<std::uint32_t>(nb.size());
    s.num_edges += d;
    s.max_degree = std::max(s.max_degree, d);
    s.min_degree = std::min(s.min_degree, d);
    if (d == 0) ++s.zero_degree_nodes;
    sorted.assign(nb.begin(), nb.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t k = 0; k < sorted.size(); ++k) {
      if (sorted[k] == i) ++s.self_loops;
      if (sorted[k] >= n) ++s.invalid_edges;
      if (k > 0 && sorted[k] == sorted[k - 1]) ++s.duplicate_edges;
    }
  }
  s.avg_degree = static_cast<double>(s.num_edges) / static_cast<double>(n);
  const auto seen = ReachableFrom(graph, entry);
  s.unreachable = static_cast<std::uint64_t>(std::count(seen.begin(), seen.end(), 0));
  return s;
}

}  // namespace strata::graph
