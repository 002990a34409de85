// Search over an SSD-resident graph index: DiskANN's beam search with the I/O
// techniques of OctopusANN ("I/O Optimizations for Graph-Based Disk-Resident
// ANN Search: A Design Space Exploration") as switches (SearchParams):
//   - candidate list of size L ranked by PQ distance (codes in RAM, or inline
//     in the records for all-in-storage indexes);
//   - entry: the medoid, or the nearest sample nodes of the in-RAM MemGraph;
//   - each round reads the pages of up to W (beam width) nearest unexpanded
//     candidates through the caller's IoQueue (O_DIRECT, io_uring by
//     default); with dynamic width W starts small and grows once the search
//     converges; with the pipeline, reads are issued as soon as any completes
//     instead of once per round;
//   - an expanded node's exact distance is kept for the final re-rank and its
//     unvisited neighbours are PQ-scored into the list; with page search every
//     record of a fetched page is expanded (pages are then read once each);
//   - the walk is bounded by max(4 L, 32) expansions (DefraDB's DISKANN
//     vector index).
// Results come only from expanded nodes, ranked by exact distance, and are
// reported as external ids. Without the pipeline, results are independent of
// I/O timing (identical across runs and thread counts).
#ifndef STRATA_SEARCH_GRAPH_SEARCH_H_
#define STRATA_SEARCH_GRAPH_SEARCH_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "graph/visited_set.h"
#include "search/disk_candidates.h"
#include "search/graph_index_data.h"
#include "search/record_distance.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/search.h"

namespace strata::search {

// Per-thread search state: the I/O queue and buffers (allocated once, reused
// by every query), candidate list, visited sets and scratch. Not thread-safe;
// one per search thread.
class GraphSearchContext {
 public:
  // `max_beam_width` (1..128) bounds SearchParams::beam_width for this context.
  static Result<std::unique_ptr<GraphSearchContext>> Create(const GraphIndexData& index,
                                                            const IoQueueOptions& io_options,
                                                            std::uint32_t max_beam_width = 64);

  // Searches `query` (dim floats; normalised internally for cosine). Writes
  // min(k, found) external ids and exact distances (ascending) into
  // `ids`/`distances` (size >= k); the rest are kInvalidVectorId / +inf.
  // InvalidArgument for bad parameters or query; Corruption if a read sector
  // fails its checksum; IOError if a read fails.
  Status Search(std::span<const float> query, const SearchParams& params,
                std::span<VectorId> ids, std::span<float> distances, QueryStats* stats);

  IoEngine engine() const { return queue_->engine(); }

  // While set, every expanded slot is appended to `trace` (for the frequency
  // cache's warm-up); null to stop.
  void SetTrace(std::vector<std::uint32_t>* trace) { trace_ = trace; }

 private:
  explicit GraphSearchContext(const GraphIndexData& index);

  Status Prepare(std::span<const float> query, const SearchParams& params,
                 std::size_t result_slots, QueryStats* stats);
  void Seed(const SearchParams& params, QueryStats* stats);
  // Seeds the list with the rows of params.restrict_to only (ranked by PQ
  // code); later expansions offer no neighbours.
  void SeedRestricted(const SearchParams& params, QueryStats* stats);
  // Adds the first kMaxEntryRows of params.entry_rows to the seeds.
  void SeedEntryRows(const SearchParams& params, QueryStats* stats);
  // Exact scan: an accepted exact distance, for the convergence test.
  void NoteExact(float distance);
  // Whether the row in `slot` passes this query's filter (steered walks).
  bool PassesFilter(std::uint32_t slot) const;
  // Scores `rows` (index rows, not slots) into the list by their codes.
  void SeedRows(std::span<const std::uint64_t> rows, QueryStats* stats);
  // The exact scan has converged (SearchParams::exact_scan_patience).
  bool ScanConverged(const SearchParams& params) const {
    return restricted_ && params.exact_scan_patience > 0 &&
           unchanged_run_ >= params.exact_scan_patience && top_.size() >= params.k;
  }
  Status RunRounds(const SearchParams& params, QueryStats* stats);
  Status RunPipelined(const SearchParams& params, QueryStats* stats);
  // Takes the nearest new candidate: queues it for expansion from the cache,
  // or a read of its page into pending_ (unless page search already covers it).
  Status Take(const SearchParams& params, QueryStats* stats);
  Status SubmitPending(QueryStats* stats);
  // Expands the cached nodes taken since the last call, from RAM.
  Status ExpandCached(QueryStats* stats);
  // Decodes a completed read and expands its target (and, with page search,
  // the other records of the page); returns the buffer to the free list.
  Status Complete(IoRequest* request, const SearchParams& params, QueryStats* stats);
  // Exact distance into the results, neighbours into the list (for a page
  // mate only when it is nearer than the list's worst entry).
  void Expand(std::uint32_t slot, const format::NodeRecordView& record, bool page_mate,
              QueryStats* stats);
  void OfferNeighbours(const format::NodeRecordView& record, QueryStats* stats);
  // Dynamic width: widens the beam once the search converges and nearly all
  // reads land inside the list (PipeANN's adaptive rule).
  void UpdateWidth(const SearchParams& params);

  const GraphIndexData& index_;
  const format::GraphLayout& layout_;
  std::unique_ptr<IoQueue> queue_;
  IoFileId file_id_ = 0;
  BufferPool buffers_;
  std::uint32_t max_beam_width_ = 0;
  std::optional<MemGraph::Walker> walker_;
  RecordDistance record_distance_;

  // Per-query state.
  DiskCandidates list_;
  graph::VisitedSet offered_;    // slots ever scored into the list
  graph::VisitedSet expanded_;   // slots expanded (exact distance known)
  graph::VisitedSet pages_;      // pages read or in flight (page search)
  quant::PqDistanceTable table_;
  std::vector<float> query_;
  std::uint32_t width_ = 0;
  bool converged_ = false;
  bool restricted_ = false;  // this query ranks params.restrict_to only
  bool rows_seedable_ = false;  // codes in RAM and rows map to slots
  bool steered_ = false;  // this query's walk offers only neighbours the filter passes
  // Exact scan: the k best exact distances so far (a max-heap) and how many
  // passing records in a row left them unchanged.
  std::vector<float> top_;
  std::uint32_t top_k_ = 0;
  std::uint32_t unchanged_run_ = 0;
  std::uint32_t reads_in_ = 0, reads_total_ = 0;  // dynamic-width counters
  std::uint32_t taken_ = 0;                       // candidates taken (walk bound)
  std::vector<std::uint32_t>* trace_ = nullptr;

  std::vector<std::pair<float, VectorId>> results_;  // exact distance, external id
  const IdFilter* filter_ = nullptr;                 // this query's, or null
  std::vector<std::byte> record_scratch_;
  std::vector<std::uint32_t> fresh_;
  std::vector<std::uint32_t> fresh_slots_in_record_;  // their positions in the record
  std::vector<std::uint8_t> fresh_codes_;
  std::vector<float> fresh_dists_;
  std::vector<std::uint32_t> seeds_;
  std::vector<IoRequest> requests_;       // one per buffer
  std::vector<float> recent_distances_;   // PQ distances of nodes taken since UpdateWidth
  std::vector<std::uint32_t> cached_pending_;  // cached nodes taken, not yet expanded
  std::vector<std::uint32_t> free_buffers_;
  std::vector<IoRequest*> pending_;       // filled, not yet submitted
  std::vector<IoRequest*> completed_;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_GRAPH_SEARCH_H_
