// Search over the decoupled graph layout (NAVIS's locality-driven
// decoupling; Sun et al., "NAVIS: Concurrent Search and Update with Low
// Position-Seeking Overhead in On-SSD Graph-Based Vector Search"): the walk
// reads edge pages only (many short lists to a 4 KiB page), steered by the
// PQ codes in RAM; full vectors live in a file of their own and are read
// only at the end, to re-rank, by speculative re-ranking (groups of
// SearchParams::rerank_group in code order until a group leaves the exact
// top-k unchanged; search/speculative_rerank.h).
//
//   - candidate list of size L ranked by PQ distance, seeded from the
//     MemGraph's nearest samples (or the entry point);
//   - each round takes up to W nearest unexpanded candidates and reads the
//     edge pages not already read this query; a fetched page is kept for the
//     rest of the query, so no page is read twice;
//   - page search: every other list on a fetched page whose vertex's code
//     distance would enter the list is expanded too (its vertex joins the
//     list as expanded);
//   - the walk is bounded by max(4 L, 32) candidates taken, as the packed
//     search is.
// Results are the re-ranked vertices mapped to rows (GraphIndexData::RowOfSlot).
// Deterministic: results do not depend on I/O timing.
#ifndef STRATA_SEARCH_DECOUPLED_SEARCH_H_
#define STRATA_SEARCH_DECOUPLED_SEARCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/edge_file.h"
#include "format/vector_file.h"
#include "graph/neighbor.h"
#include "graph/visited_set.h"
#include "search/disk_candidates.h"
#include "search/edge_page_cache.h"
#include "search/graph_index_data.h"
#include "search/record_distance.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/search.h"

namespace strata::search {

// The decoupled layout's files and its RAM indirection table; vertices are
// the slots of the GraphIndexData it is searched with (its codes, MemGraph
// and entry point).
struct DecoupledGraphData {
  format::EdgeFile edges;
  format::VectorFile vectors;
  std::vector<format::EdgeLocation> where;  // vertex -> its list (8 B a vertex)
  std::unique_ptr<EdgePageCache> cache;     // hot edge pages; may be null

  // Opens `dir`/graph.edges and `dir`/graph.vectors, rebuilds the
  // indirection table from the pages and checks both files against `index`
  // (vertex count, dimension, element type): Corruption naming the file
  // where they differ.
  static Result<DecoupledGraphData> Open(const std::string& dir, const GraphIndexData& index);
  std::size_t MemoryBytes() const {
    return where.capacity() * sizeof(format::EdgeLocation) + (cache ? cache->MemoryBytes() : 0);
  }
  std::uint64_t DiskBytes() const;
};

// Per-thread search state over one decoupled layout. Not thread-safe; one
// per search thread. `index` needs its codes in RAM.
class DecoupledSearchContext {
 public:
  static Result<std::unique_ptr<DecoupledSearchContext>> Create(const GraphIndexData& index,
                                                                const DecoupledGraphData& layout,
                                                                const IoQueueOptions& io_options,
                                                                std::uint32_t max_beam_width);
  ~DecoupledSearchContext();

  // As GraphSearchContext::Search. SearchParams' dynamic_width, pipelined and
  // restrict_to are not used here (the walk runs in rounds of W); the filter
  // decides which re-ranked vertices are returned.
  Status Search(std::span<const float> query, const SearchParams& params,
                std::span<VectorId> ids, std::span<float> distances, QueryStats* stats);

  IoEngine engine() const { return queue_->engine(); }

 private:
  class VectorReader;

  DecoupledSearchContext(const GraphIndexData& index, const DecoupledGraphData& layout);
  void Seed(const SearchParams& params, QueryStats* stats);
  void Offer(std::span<const std::uint32_t> vertices, QueryStats* stats);
  Status Walk(const SearchParams& params, QueryStats* stats);
  // The page of a fetched vertex kept this query, or null.
  const std::byte* KeptPage(std::uint32_t page) const;
  // Expands `vertex` from its (kept) page: its neighbours into the list.
  Status Expand(std::uint32_t vertex, const std::byte* sector, QueryStats* stats);
  // A read has completed: verify the page, offer it to the cache, Arrive.
  Status Complete(const IoRequest& request, const SearchParams& params, QueryStats* stats);
  // A page is here (read or from the cache; verified): keep it, expand
  // `target` and (page search) the mates the list would keep.
  Status Arrive(std::uint32_t page_no, std::uint32_t target, const std::byte* sector,
                const SearchParams& params, QueryStats* stats);
  Status Rerank(const SearchParams& params, QueryStats* stats);

  const GraphIndexData& index_;
  const DecoupledGraphData& layout_;
  std::unique_ptr<IoQueue> queue_;
  IoFileId edge_file_ = 0;
  IoFileId vector_file_ = 0;
  BufferPool buffers_;  // max_beam_width_ edge-page buffers, then the re-rank's
  std::uint32_t max_beam_width_ = 0;
  std::optional<MemGraph::Walker> walker_;
  RecordDistance record_distance_;
  std::unique_ptr<VectorReader> vectors_;

  // Per-query state.
  DiskCandidates list_;
  graph::VisitedSet offered_;
  graph::VisitedSet expanded_;
  graph::VisitedSet requested_pages_;  // read or in flight
  std::unordered_map<std::uint32_t, std::size_t> kept_;  // page -> offset in kept_pages_
  std::vector<std::byte> kept_pages_;
  quant::PqDistanceTable table_;
  std::vector<float> query_;
  std::uint32_t taken_ = 0;
  const IdFilter* filter_ = nullptr;
  std::vector<IoRequest> requests_;
  std::vector<IoRequest*> pending_;
  std::vector<std::uint32_t> deferred_;  // taken while their page was in flight
  std::vector<std::uint32_t> seeds_;
  std::vector<std::uint32_t> neighbours_;
  std::vector<std::uint32_t> fresh_;
  std::vector<std::uint8_t> fresh_codes_;
  std::vector<float> fresh_dists_;
  std::vector<graph::Neighbor> candidates_;
  std::vector<graph::Neighbor> top_;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_DECOUPLED_SEARCH_H_
