#include "graph/connectivity.h"

#include <algorithm>
#include <vector>

#include "graph/graph_stats.h"
#include "graph/greedy_search.h"

namespace strata::graph {

namespace {

// Reachable nodes with a free slot examined when no scored node has one.
constexpr std::size_t kScanCandidates = 4096;
// Safety bound only: links never strand a reachable node (see Linker), so
// the first round already reaches everything.
constexpr int kMaxRounds = 3;

// Reachability state: a BFS spanning tree from the entry point. Tree edges
// (parent[w] -> w) are never removed, so every marked node stays reachable
// whatever non-tree edge is replaced.
class Reach {
 public:
  Reach(const FlatAdjacency& graph, NodeId entry, std::uint32_t limit)
      : graph_(graph), limit_(limit), seen_(graph.size(), 0), parent_(graph.size(), kInvalidNode) {
    Mark(entry, kInvalidNode);
  }

  bool Seen(NodeId i) const { return seen_[i] != 0; }
  bool IsTreeEdge(NodeId v, NodeId w) const { return parent_[w] == v; }
  std::uint64_t Unreached() const {
    return static_cast<std::uint64_t>(std::count(seen_.begin(), seen_.end(), 0));
  }
  // Reachable nodes that had a free slot when marked (may have filled since).
  std::vector<NodeId>& roomy() { return roomy_; }

  // Marks u (now linked from `parent`) and everything newly reachable from it.
  void Mark(NodeId u, NodeId parent) {
    const NodeId n = graph_.size();
    queue_.clear();
    Visit(u, parent);
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const NodeId x = queue_[head];
      for (const NodeId m : graph_.Neighbors(x)) {
        if (m < n && !seen_[m]) Visit(m, x);
      }
    }
  }

 private:
  void Visit(NodeId m, NodeId parent) {
    seen_[m] = 1;
    parent_[m] = parent;
    queue_.push_back(m);
    if (graph_.Degree(m) < limit_) roomy_.push_back(m);
  }

  const FlatAdjacency& graph_;
  const std::uint32_t limit_;
  std::vector<std::uint8_t> seen_;
  std::vector<NodeId> parent_;
  std::vector<NodeId> roomy_;
  std::vector<NodeId> queue_;
};

class Linker {
 public:
  Linker(FlatAdjacency* graph, const VectorView& vectors, std::uint32_t max_degree)
      : graph_(graph), vectors_(vectors), limit_(std::min(max_degree, graph->capacity())) {}
  std::uint32_t limit() const { return limit_; }

  // Adds an edge v -> u from a reachable v, given the last search for u (its
  // expanded nodes in `pool` and its visited set, all reachable). Returns v
  // and whether an edge was replaced; v = kInvalidNode if nothing fit.
  std::pair<NodeId, bool> Link(NodeId u, std::vector<Neighbor>* pool, const VisitedSet& visited,
                               Reach* reach) {
    std::sort(pool->begin(), pool->end(), NeighborLess);
    // 1. The nearest expanded node with a free slot.
    for (const Neighbor& v : *pool) {
      if (Appendable(v.id, u)) return {Append(v.id, u), false};
    }
    // 2. Expanded nodes are the best-connected ones and are often full (under
    //    inner product they are the few high-norm hubs); the wider set of
    //    scored nodes often has room.
    Neighbor best{kInvalidNode, 0.0f};
    visited.ForEach([&](NodeId v) {
      if (Appendable(v, u)) Consider(u, v, &best);
    });
    if (best.id != kInvalidNode) return {Append(best.id, u), false};
    // 3. The nearest of up to kScanCandidates other reachable nodes with a
    //    free slot (from a u-dependent start; full ones are dropped).
    std::vector<NodeId>& roomy = reach->roomy();
    std::size_t examined = 0;
    std::size_t k = roomy.empty() ? 0 : (static_cast<std::size_t>(u) * 0x9E3779B1u) % roomy.size();
    while (!roomy.empty() && examined < std::min(kScanCandidates, roomy.size())) {
      if (k >= roomy.size()) k = 0;
      const NodeId v = roomy[k];
      if (graph_->Degree(v) >= limit_) {
        roomy[k] = roomy.back();
        roomy.pop_back();
        continue;
      }
      ++examined;
      ++k;
      if (Appendable(v, u)) Consider(u, v, &best);
    }
    if (best.id != kInvalidNode) return {Append(best.id, u), false};
    // 4. No free slot in sight: replace the longest non-tree edge of the
    //    nearest expanded node. Non-tree edges are never needed for
    //    reachability, so this cannot strand anything.
    for (const Neighbor& v : *pool) {
      if (v.id == u || graph_->Contains(v.id, u)) continue;
      const auto nb = graph_->Neighbors(v.id);
      std::uint32_t best_pos = 0;
      float best_dist = 0.0f;
      bool found = false;
      for (std::uint32_t p = 0; p < nb.size(); ++p) {
        if (reach->IsTreeEdge(v.id, nb[p])) continue;
        const float d = vectors_.Distance(v.id, nb[p]);
        if (!found || d > best_dist) {
          best_pos = p;
          best_dist = d;
          found = true;
        }
      }
      if (!found) continue;
      graph_->Replace(v.id, best_pos, u);
      return {v.id, true};
    }
    return {kInvalidNode, false};
  }

 private:
  bool Appendable(NodeId v, NodeId u) const {
    return v != u && graph_->Degree(v) < limit_ && !graph_->Contains(v, u);
  }
  void Consider(NodeId u, NodeId v, Neighbor* best) const {
    const Neighbor c{v, vectors_.DistanceTo(vectors_.Row(u), v)};
    if (best->id == kInvalidNode || NeighborLess(c, *best)) *best = c;
  }
  NodeId Append(NodeId v, NodeId u) {
    graph_->Append(v, u);
    return v;
  }

  FlatAdjacency* graph_;
  const VectorView& vectors_;
  const std::uint32_t limit_;
};

}  // namespace

ConnectReport ConnectUnreachable(FlatAdjacency* graph, NodeId entry, const VectorView& vectors,
                                 std::uint32_t max_degree, std::uint32_t list_size) {
  ConnectReport report;
  const NodeId n = graph->size();
  if (n == 0 || entry >= n) return report;
  Linker linker(graph, vectors, max_degree);
  GraphSearcher searcher(vectors, *graph);
  std::vector<Neighbor> pool;
  const NodeId entries[1] = {entry};
  for (int round = 0; round < kMaxRounds; ++round) {
    Reach reach(*graph, entry, linker.limit());
    const std::uint64_t unreached = reach.Unreached();
    if (round == 0) report.unreachable_before = unreached;
    report.unreachable_after = unreached;
    if (unreached == 0) break;
    for (NodeId u = 0; u < n; ++u) {
      if (reach.Seen(u)) continue;
      // The search only walks reachable nodes, so every node it scores is a
      // valid place to hang u from.
      searcher.Search(vectors.Row(u), entries, list_size, &pool);
      const auto [v, replaced] = linker.Link(u, &pool, searcher.Visited(), &reach);
      if (v == kInvalidNode) continue;  // only if every expanded list is all tree edges
      ++(replaced ? report.edges_replaced : report.edges_added);
      reach.Mark(u, v);
    }
    report.unreachable_after = Reach(*graph, entry, linker.limit()).Unreached();
    if (report.unreachable_after == 0) break;
  }
  return report;
}

}  // namespace strata::graph
