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
// On the packed in-place baseline (edge slots that carry their vectors,
// format/edge_page.h) every expanded vertex gets its exact distance from the
// page it was read with, as DiskANN's search does, and the results are the
// nearest expanded vertices: no vector is read.
// Deterministic: results do not depend on I/O timing.
#ifndef STRATA_SEARCH_DECOUPLED_SEARCH_H_
#define STRATA_SEARCH_DECOUPLED_SEARCH_H_

#include <cstdint>
#include <bit>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "format/edge_file.h"
#include "format/vector_file.h"
#include "graph/neighbor.h"
#include "graph/visited_set.h"
#include "search/decoupled_growth.h"
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
  // Set while the layout is changed in place (update/in_place_updater.h):
  // `where` then holds growth->capacity() entries. Null for a static layout.
  std::unique_ptr<DecoupledGrowth> growth;

  // `vertex`'s entry, read whole (the writer may be switching it).
  format::EdgeLocation Location(std::uint32_t vertex) const {
    return std::bit_cast<format::EdgeLocation>(
        __atomic_load_n(reinterpret_cast<const RawLocation*>(&where[vertex]), __ATOMIC_SEQ_CST));
  }
  // The writer switches `vertex` to `loc` (whole, sequentially consistent).
  void SetLocation(std::uint32_t vertex, format::EdgeLocation loc) {
    __atomic_store_n(reinterpret_cast<RawLocation*>(&where[vertex]),
                     std::bit_cast<std::uint64_t>(loc), __ATOMIC_SEQ_CST);
  }

  // Opens `dir`/graph.edges and `dir`/graph.vectors, rebuilds the
  // indirection table from the pages and checks both files against `index`
  // (vertex count, dimension, element type): Corruption naming the file
  // where they differ. With `grown` the files may have been changed in
  // place since they were written: pages and slots past their headers are
  // accepted, and the table holds only the lists still where they were
  // written (EdgeFile::ScanOriginalLocations), the others at page 0 for
  // the updater's recovery to place.
  static Result<DecoupledGraphData> Open(const std::string& dir, const GraphIndexData& index,
                                         bool grown = false);
  std::size_t MemoryBytes() const {
    return where.capacity() * sizeof(format::EdgeLocation) + (cache ? cache->MemoryBytes() : 0) +
           (growth ? growth->MemoryBytes() : 0);
  }
  std::uint64_t DiskBytes() const;

 private:
  using RawLocation __attribute__((may_alias)) = std::uint64_t;
  static_assert(sizeof(format::EdgeLocation) == sizeof(std::uint64_t));
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

  // Position seeking for an insert (NAVIS): walks as Search does for
  // `query` (which is checked and prepared the same way), then gives the
  // exact distances of the nearest params.k candidates, read from the vector
  // file, in `exact` (ascending) and the other candidates with their code
  // distances in `approximate` (ascending). Deleted vertices are left out of
  // both; the filter is not used.
  Status Explore(std::span<const float> query, const SearchParams& params,
                 std::vector<graph::Neighbor>* exact, std::vector<graph::Neighbor>* approximate,
                 QueryStats* stats);
  // The last query in the index's distance space (normalised under cosine).
  std::span<const float> prepared_query() const { return query_; }
  // `vertex`'s list at `loc` from an edge page the last query fetched and
  // kept (an insert's neighbours were mostly expanded while seeking): true
  // with `ids` (and, given, `vector`: the slot's vector, empty when slots
  // carry none) filled, false if that page was not fetched. The caller
  // vouches that the page has not been rewritten since.
  bool KeptList(std::uint32_t vertex, format::EdgeLocation loc, std::vector<std::uint32_t>* ids,
                std::vector<std::byte>* vector = nullptr) const;
  // An edge page the last query fetched and kept (its sector), or null.
  const std::byte* KeptPage(std::uint32_t page) const;

  IoEngine engine() const { return queue_->engine(); }

 private:
  class VectorReader;

  DecoupledSearchContext(const GraphIndexData& index, const DecoupledGraphData& layout);
  // Both searches' start: checks, per-query state, the reader epoch.
  Status Begin(std::span<const float> query, const SearchParams& params, std::size_t slots,
               QueryStats* stats);
  void End();
  const std::uint8_t* Code(std::uint32_t v) const {
    return v < index_.num_slots() ? index_.code(v) : layout_.growth->code(v);
  }
  std::uint32_t RowOf(std::uint32_t v) const {
    if (v < index_.num_slots()) return index_.RowOfSlot(v);
    return layout_.growth->base_rows() + (v - layout_.growth->base());
  }
  // Left out of an insert's candidates.
  bool Deleted(std::uint32_t v) const { return layout_.growth && layout_.growth->deleted(v); }
  // Left out of a search's results.
  bool Hidden(std::uint32_t v) const {
    return layout_.growth && layout_.growth->search_hides_deleted() && layout_.growth->deleted(v);
  }
  // May be a result: a row, not hidden, and passing the search's filter.
  bool Returnable(std::uint32_t vertex) const;
  // Exact distances of `candidates` (their vectors read a buffer-full at a
  // time, the next read while this one is computed), in candidate order.
  Status ExactDistances(std::span<const graph::Neighbor> candidates,
                        std::vector<graph::Neighbor>* out);
  void Seed(const SearchParams& params, QueryStats* stats);
  void Offer(std::span<const std::uint32_t> vertices, QueryStats* stats);
  Status Walk(const SearchParams& params, QueryStats* stats);
  // Expands `vertex`, whose list is at `loc`, from its (kept) page: its
  // neighbours into the list.
  Status Expand(std::uint32_t vertex, format::EdgeLocation loc, const std::byte* sector,
                QueryStats* stats);
  // A read has completed: verify the page, offer it to the cache, Arrive.
  Status Complete(const IoRequest& request, const SearchParams& params, QueryStats* stats);
  // A page is here (read or from the cache; verified): keep it, expand
  // `target` and (page search) the mates the list would keep.
  Status Arrive(format::EdgeLocation loc, std::uint32_t target, const std::byte* sector,
                const SearchParams& params, QueryStats* stats);
  Status Rerank(const SearchParams& params, QueryStats* stats);
  // The edge slots carry vectors (the packed baseline).
  bool PageVectors() const { return layout_.edges.geometry().vector_bytes > 0; }

  const GraphIndexData& index_;
  const DecoupledGraphData& layout_;
  std::unique_ptr<IoQueue> queue_;
  IoFileId edge_file_ = 0;
  IoFileId vector_file_ = 0;
  BufferPool buffers_;  // max_beam_width_ edge-page buffers, then the re-rank's
  std::uint32_t max_beam_width_ = 0;
  std::optional<MemGraph::Walker> walker_;
  const MemGraph* walker_graph_ = nullptr;  // the graph walker_ walks
  std::shared_ptr<const MemGraph> entrance_;  // a growing layout's extended one, kept alive
  RecordDistance record_distance_;
  std::unique_ptr<VectorReader> vectors_;

  std::optional<std::uint32_t> reader_slot_;  // growing layouts: this context's epoch slot

  // Per-query state.
  std::uint32_t limit_ = 0;  // vertices this query may meet (those published when it began)
  std::vector<format::EdgeLocation> issued_;  // per request: the location read
  std::vector<std::pair<std::uint32_t, format::EdgeLocation>> deferred_;  // page in flight
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
  std::vector<std::uint32_t> seeds_;
  std::vector<std::uint32_t> neighbours_;
  std::vector<std::uint32_t> fresh_;
  std::vector<std::uint8_t> fresh_codes_;
  std::vector<float> fresh_dists_;
  std::vector<graph::Neighbor> candidates_;
  std::vector<graph::Neighbor> top_;
  std::vector<graph::Neighbor> expanded_exact_;  // PageVectors: every expanded vertex, exact
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_DECOUPLED_SEARCH_H_
