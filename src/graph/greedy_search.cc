#include "graph/greedy_search.h"

#include <algorithm>
#include <mutex>
#include <string>

namespace strata::graph {

GraphSearcher::GraphSearcher(const VectorView& vectors, const FlatAdjacency& graph,
                             SpinLock* locks)
    : vectors_(vectors), graph_(graph), locks_(locks) {
  neighbors_.reserve(graph.capacity());
  fresh_.reserve(graph.capacity());
}

SearchCounters GraphSearcher::Search(const float* query, std::span<const NodeId> entry_points,
                                     std::uint32_t list_size, std::vector<Neighbor>* expanded,
                                     const NodePredicate* accept) {
  SearchCounters counters;
  candidates_.Reset(std::max<std::uint32_t>(list_size, 1));
  visited_.Clear();
  if (expanded != nullptr) expanded->clear();

  for (const NodeId e : entry_points) {
    if (!visited_.Insert(e)) continue;
    candidates_.Insert(e, vectors_.DistanceTo(query, e));
    ++counters.distance_computations;
  }

  while (candidates_.HasUnexpanded()) {
    const Neighbor cur = candidates_.ExpandNext();
    ++counters.hops;
    if (expanded != nullptr) expanded->push_back(cur);

    // Copy the list (under its lock while the graph is being built) so no
    // lock is held during distance computations.
    neighbors_.clear();
    if (locks_ != nullptr) {
      std::lock_guard<SpinLock> guard(locks_[cur.id]);
      const auto nb = graph_.Neighbors(cur.id);
      neighbors_.assign(nb.begin(), nb.end());
    } else {
      const auto nb = graph_.Neighbors(cur.id);
      neighbors_.assign(nb.begin(), nb.end());
    }

    fresh_.clear();
    for (const NodeId m : neighbors_) {
      // The predicate holds for the whole search: a failing node is marked
      // visited so it is judged once.
      if (visited_.Insert(m) && (accept == nullptr || accept->Accept(m))) fresh_.push_back(m);
    }
    // Prefetch two rows ahead: distance kernels are memory-bound on rows that
    // are scattered across the base.
    const std::size_t nf = fresh_.size();
    for (std::size_t i = 0; i < nf && i < 2; ++i) vectors_.Prefetch(fresh_[i]);
    for (std::size_t i = 0; i < nf; ++i) {
      if (i + 2 < nf) vectors_.Prefetch(fresh_[i + 2]);
      const NodeId m = fresh_[i];
      candidates_.Insert(m, vectors_.DistanceTo(query, m));
    }
    counters.distance_computations += nf;
  }
  return counters;
}

void GraphSearcher::TopK(std::uint32_t k, std::vector<NodeId>* ids,
                         std::vector<float>* distances) const {
  const std::size_t n = std::min<std::size_t>(k, candidates_.size());
  if (ids != nullptr) ids->resize(n);
  if (distances != nullptr) distances->resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Neighbor nb = candidates_[i];
    if (ids != nullptr) (*ids)[i] = nb.id;
    if (distances != nullptr) (*distances)[i] = nb.distance;
  }
}

Result<GreedySearchResult> GreedySearch(const VectorView& vectors, const FlatAdjacency& graph,
                                        NodeId entry_point, std::span<const float> query,
                                        std::uint32_t list_size, std::uint32_t k) {
  if (query.size() != vectors.dim()) {
    return Status::InvalidArgument("GreedySearch: query has " + std::to_string(query.size()) +
                                   " floats, vectors have dim " + std::to_string(vectors.dim()));
  }
  if (graph.size() != vectors.size()) {
    return Status::InvalidArgument("GreedySearch: graph has " + std::to_string(graph.size()) +
                                   " nodes but there are " + std::to_string(vectors.size()) +
                                   " vectors");
  }
  if (k == 0 || list_size == 0) {
    return Status::InvalidArgument("GreedySearch: k and list_size must be > 0");
  }
  if (entry_point >= graph.size()) {
    return Status::InvalidArgument("GreedySearch: entry point " + std::to_string(entry_point) +
                                   " out of range");
  }
  GraphSearcher searcher(vectors, graph);
  const NodeId entries[1] = {entry_point};
  const SearchCounters c = searcher.Search(query.data(), entries, std::max(list_size, k));
  GreedySearchResult r;
  searcher.TopK(k, &r.ids, &r.distances);
  r.hops = c.hops;
  r.distance_computations = c.distance_computations;
  return r;
}

}  // namespace strata::graph
