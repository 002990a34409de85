// Beam search over an SSD-resident graph index (DiskANN's search, seed 000's
// baseline): a candidate list of size L ranked by PQ distance (codes in RAM);
// each round takes up to W (beam width) nearest unexpanded candidates, reads
// their records from SSD in one batch through the caller's IoQueue (O_DIRECT,
// io_uring by default), computes the exact distance of every fetched node
// (kept for the final re-rank) and the PQ distance of its unvisited
// neighbours, which enter the list. Results come only from fetched nodes,
// ranked by exact distance. The walk is bounded by max(4 L, 32) expansions
// (seed 002), so memory per query stays small.
#ifndef STRATA_SEARCH_GRAPH_SEARCH_H_
#define STRATA_SEARCH_GRAPH_SEARCH_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "graph/neighbor.h"
#include "graph/visited_set.h"
#include "search/graph_index_data.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/search.h"

namespace strata::search {


// Per-thread search state: the I/O queue and buffers (allocated once, reused
// by every query), candidate list, visited set and scratch. Not thread-safe;
// one per search thread.
class GraphSearchContext {
 public:
  // `max_beam_width` bounds SearchParams::beam_width for this context.
  static Result<std::unique_ptr<GraphSearchContext>> Create(const GraphIndexData& index,
                                                            const IoQueueOptions& io_options,
                                                            std::uint32_t max_beam_width = 64);

  // Searches `query` (dim floats; normalised internally for cosine). Writes
  // min(k, found) ids and exact distances (ascending) into `ids`/`distances`
  // (size >= k); the rest are kInvalidVectorId / +inf. Corruption if a read
  // sector fails its checksum; IOError if a read fails.
  Status Search(std::span<const float> query, const SearchParams& params,
                std::span<VectorId> ids, std::span<float> distances, QueryStats* stats);

  IoEngine engine() const { return queue_->engine(); }

 private:
  GraphSearchContext(const GraphIndexData& index) : index_(index) {}
  float ExactDistance(const float* query, std::span<const std::byte> vector);
  // Scores the unvisited neighbours of one expanded node on PQ codes and
  // offers them to the candidate list.
  void OfferNeighbours(const format::NodeRecordView& record, QueryStats* stats);

  const GraphIndexData& index_;
  std::unique_ptr<IoQueue> queue_;
  IoFileId file_id_ = 0;
  BufferPool buffers_;
  std::uint32_t max_beam_width_ = 0;
  graph::CandidateList candidates_;
  graph::VisitedSet visited_;
  quant::PqDistanceTable table_;
  std::vector<float> query_;                 // preprocessed query
  std::vector<float> vector_scratch_;        // record vector converted to float
  std::vector<std::byte> record_scratch_;    // multi-sector gather
  std::vector<graph::Neighbor> fetched_;     // exact distances of fetched nodes
  std::vector<std::uint32_t> fresh_;         // unvisited neighbours of one node
  std::vector<std::uint8_t> fresh_codes_;    // their PQ codes, gathered
  std::vector<float> fresh_dists_;
  std::vector<IoRequest> requests_;
  std::vector<IoRequest*> request_ptrs_;
  std::vector<IoRequest*> completed_;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_GRAPH_SEARCH_H_
