// MemGraph: an in-RAM navigation graph over a sample of the disk index's
// nodes (OctopusANN §4.1.2; Starling and PipeANN sample 1 %). A query first
// walks this small graph with exact distances, without any I/O, and the
// nearest sample nodes become the entry points of the disk search, which
// then starts close to the query instead of at the medoid: fewer hops, fewer
// pages.
#ifndef STRATA_SEARCH_MEM_GRAPH_H_
#define STRATA_SEARCH_MEM_GRAPH_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graph/adjacency.h"
#include "graph/greedy_search.h"
#include "graph/vector_view.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::search {

class MemGraph {
 public:
  MemGraph() = default;
  MemGraph(MemGraph&&) = default;
  MemGraph& operator=(MemGraph&&) = default;

  // Takes the sample: `vectors` (m * dim floats, in the index's distance
  // space: unit vectors under cosine), its graph (m nodes) and entry node,
  // and `slots` (m: the disk slot of each sample node). InvalidArgument on
  // inconsistent sizes or ids out of range.
  static Result<MemGraph> Create(std::uint32_t dim, Metric metric, std::vector<float> vectors,
                                 graph::FlatAdjacency adjacency, std::uint32_t entry,
                                 std::vector<std::uint32_t> slots);

  // This graph with `slots.size()` more nodes (their vectors, in the
  // index's distance space, in `vectors`), each inserted as the Vamana build
  // inserts a node (greedy search at `list_size`, RobustPrune at `alpha`,
  // back-edges), degrees bounded by max_degree(). The entrance graph of an
  // index taking inserts in place (NAVIS keeps its entry points following the
  // data this way): a new graph is built aside and published whole, so
  // searches never wait for it.
  Result<MemGraph> Extended(std::span<const float> vectors, std::span<const std::uint32_t> slots,
                            std::uint32_t list_size, float alpha) const;

  // Sections of a kMemGraph blob file and back. Deserialize: Corruption on
  // any inconsistency.
  std::vector<std::vector<std::uint8_t>> Serialize() const;
  static Result<MemGraph> Deserialize(const std::vector<std::vector<std::uint8_t>>& sections);

  bool empty() const { return slots_.empty(); }
  std::uint32_t size() const { return static_cast<std::uint32_t>(slots_.size()); }
  std::uint32_t dim() const { return dim_; }
  std::uint32_t max_degree() const { return adjacency_.capacity(); }
  std::span<const std::uint32_t> slots() const { return slots_; }
  std::size_t MemoryBytes() const;

  // Per-thread walker over a MemGraph (candidate list and visited set).
  class Walker {
   public:
    explicit Walker(const MemGraph& g) : graph_(g), searcher_(g.view_, g.adjacency_) {}
    // Walks the sample graph with list size `list_size` from its entry and
    // writes the best min(count, found) sample nodes (indices into slots()),
    // nearest first, into `out` (cleared). `query` in the index's distance
    // space. Returns the exact distances computed.
    std::uint64_t Search(const float* query, std::uint32_t list_size, std::uint32_t count,
                         std::vector<std::uint32_t>* out);

   private:
    const MemGraph& graph_;
    graph::GraphSearcher searcher_;
  };

 private:
  std::uint32_t dim_ = 0;
  Metric metric_ = Metric::kL2;
  std::vector<float> vectors_;
  graph::FlatAdjacency adjacency_;
  std::uint32_t entry_ = 0;
  std::vector<std::uint32_t> slots_;
  graph::VectorView view_;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_MEM_GRAPH_H_
