// Search over an SSD-resident IVF index with Split-RaBitQ ("RaBitQ-SSD: Split
// Codes and Pipelined I/O for SSD-Resident Vector Search"): the coarse
// quantizer picks n_probe clusters; each cluster's RAM FastScan blocks give,
// per vector, an estimate and a lower bound of its distance from the first
// D_m code bits; a vector survives when its lower bound is below the current
// k-th re-ranked distance dist_k; survivors are re-ranked from their SSD
// record (full B-bit estimate, or the exact distance with raw records) once
// its page is read. Survivors of one page form a page candidate with the page
// lower bound = min of their bounds.
//
// The five read pipelines of RaBitQ-SSD Table 1 (SearchParams::pipeline):
//   naive       one blocking read per surviving candidate, re-ranked at once
//   coalesced   survivors of a page share one blocking read, issued when the
//               scan leaves the page (after re-checking them against dist_k)
//   overlapped  that read is submitted asynchronously instead; completions
//               are harvested by polling after every block and re-screened
//               against the then-current dist_k before re-ranking
//   scheduled   page candidates wait in a priority set keyed by page lower
//               bound; after every block, completions are harvested and
//               pages issued in ascending bound, at most Q (inflight) in
//               flight, re-checked against dist_k at issue time; issuing
//               stops at the first failing page and the rest are dropped
//               (bounds only grow along the set and dist_k only shrinks);
//               with SearchParams::fill_first, before k results exist only
//               the pages needed to reach k are in flight
//   full        scheduled, plus in the drain (after the scan) pages are
//               issued against the alpha-quantile threshold: the distance of
//               rank max(1, round(alpha k)) in the k-NN buffer (alpha =
//               drain_alpha; 1 = scheduled). Re-ranking always uses dist_k.
// Here k is SearchParams::prune_rank when set (results past it are kept but
// never prune).
// Results can depend on I/O timing (how much re-ranking happened before a
// pruning decision) for overlapped/scheduled/full.
//
// With SearchParams::restrict_to, no cluster is probed: the listed rows
// (their storage positions from IvfIndexData::position_of) are estimated from
// their clusters' RAM blocks and their pages read in ascending bound against
// dist_k, as the scheduled pipeline does (ivf_restricted.cc) - the exact-scan
// fallback of filtered search, reading only pages whose bound can still
// improve the top k.
//
// Per-query columns (QueryStats): clusters_probed, survivors, pages_read
// (4 KiB pages issued), reads, pages_dropped (page candidates pruned before a
// read), wasted_reads (pages whose candidates all failed the re-screen),
// reranked, io_wait_us (blocked in Wait), drain_us, latency_us,
// pq_distances (RAM estimates), full_distances (= reranked).
#ifndef STRATA_SEARCH_IVF_SEARCH_H_
#define STRATA_SEARCH_IVF_SEARCH_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/timer.h"
#include "search/ivf_index_data.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/search.h"

namespace strata::search {

// Per-thread search state: the I/O queue and unit buffers (allocated once,
// reused by every query), k-NN buffer, candidates and scratch. Not
// thread-safe; one per search thread. `index` must outlive it.
class IvfSearchContext {
 public:
  // Default page reads in flight (RaBitQ-SSD: Q = 16 for <= 16 threads).
  static constexpr std::uint32_t kDefaultInflight = 16;
  // A listed (restricted) scan reads a page for most of its rows, about
  // 90 at 0.1 % specificity on synth 1M: twice the reads in flight and
  // completions collected four at a time, 700-762 -> 840-935 QPS at 2
  // threads, pages unchanged (bench/results/filter_ivf_exactness_synth1m_2026-12-06.md).
  static constexpr std::uint32_t kListedInflight = 32;
  static constexpr std::size_t kListedHarvestBatch = 4;

  // `max_inflight` (1..256) bounds SearchParams::inflight for this context.
  // Errors from MakeIoQueue / BufferPool.
  static Result<std::unique_ptr<IvfSearchContext>> Create(const IvfIndexData& index,
                                                          const IoQueueOptions& io_options,
                                                          std::uint32_t max_inflight);
  ~IvfSearchContext();

  // Searches `query` (dim floats; normalised internally for cosine). Writes
  // min(k, found) ids and distances (ascending; re-ranking estimates with
  // ex-code records, exact with raw records) into ids/distances (size >= k);
  // the rest are kInvalidVectorId / +inf. InvalidArgument for a wrong
  // dimension, non-finite query, bad params or inflight > max_inflight;
  // Corruption if a read page fails its checksum; IOError if a read fails.
  Status Search(std::span<const float> query, const SearchParams& params, std::span<VectorId> ids,
                std::span<float> distances, QueryStats* stats);

  IoEngine engine() const { return queue_->engine(); }

  // One survivor of the RAM screen.
  struct Candidate {
    std::uint32_t probe = 0;  // index into the probed clusters of this query
    std::uint32_t slot = 0;   // record slot within its read unit
    std::uint32_t id = 0;     // input row id
    float lower = 0.0f;       // lower bound of its distance
    float prefix_ip = 0.0f;   // <b, q> over the prefix (ex-code re-ranking)
  };
  // Survivors of one read unit (page): cands_[first, first + count).
  struct PageGroup {
    float lower = 0.0f;  // min lower bound of its candidates
    std::uint64_t unit = 0;
    std::uint32_t first = 0;
    std::uint32_t count = 0;
  };

 private:
  explicit IvfSearchContext(const IvfIndexData& index) : index_(index) {}

  // Scan of the probed clusters, handing page groups to the pipeline.
  Status Scan(const SearchParams& params);
  // Scan of params.restrict_to's rows instead (scheduled pipeline only).
  Status ScanRestricted(const SearchParams& params);
  // Adds candidate cands_[at], whose record lies in `unit`, to the open page
  // group, closing the open one first when it is another unit's (scans visit
  // a unit's candidates together).
  Status AddToPage(std::uint64_t unit, std::uint32_t at, const SearchParams& params);
  // Pipeline steps (ivf_pipelines.cc).
  Status OnSurvivorNaive(std::uint64_t unit, std::uint32_t index);
  Status ClosePage(const SearchParams& params);
  Status AfterBlock(const SearchParams& params);
  Status Drain(const SearchParams& params);
  // Blocking read of one unit into buffer 0 (naive, coalesced).
  Status ReadBlocking(std::uint64_t unit);
  // Submits `group` (Busy is a programming error: callers check capacity).
  Status SubmitGroup(const PageGroup& group);
  // Harvests completions: Poll when !block, else Wait for at least
  // min(min_completions, in flight).
  Status Harvest(bool block, std::size_t min_completions = 1);
  // Issues pending pages in ascending bound against `threshold`, up to the
  // queue's capacity (scheduled, full); with `fill_first`, while fewer than k
  // results exist, only until the candidates in flight could make up k.
  Status IssuePending(float threshold, bool fill_first);
  // Re-ranks the candidates of `group` from a read unit; counts a wasted
  // read when none passes the re-screen.
  Status RerankGroup(const PageGroup& group, const std::byte* unit_data);
  // Current distance of rank prune_rank_ (+inf until that many results).
  float KthDistance() const;
  // Distance of rank max(1, round(alpha prune_rank_)), +inf until
  // prune_rank_ results.
  float QuantileDistance(float alpha) const;
  void Offer(float distance, std::uint32_t id);

  const IvfIndexData& index_;
  std::unique_ptr<IoQueue> queue_;
  IoFileId file_id_ = 0;
  BufferPool buffers_;
  std::uint32_t max_inflight_ = 0;
  std::uint32_t inflight_limit_ = 0;  // this query's Q
  bool listed_scan_ = false;          // this query scans restrict_to's rows (ScanRestricted)
  std::uint32_t k_ = 0;
  std::uint32_t prune_rank_ = 0;           // SearchParams::prune_rank, resolved (1..k)
  std::uint32_t inflight_candidates_ = 0;  // candidates of the pages in flight
  QueryStats stats_;

  std::vector<float> query_;  // normalised under cosine
  quant::rabitq::RabitqQuery rq_;
  ivf::CoarseScratch coarse_scratch_;
  std::vector<ivf::CoarseHit> hits_;
  std::vector<quant::rabitq::ClusterQueryFactors> factors_;
  std::vector<Candidate> cands_;
  PageGroup open_;  // page group being collected by the scan
  bool open_valid_ = false;
  std::vector<PageGroup> pending_;                    // min-heap by lower (scheduled, full)
  std::vector<std::pair<float, std::uint32_t>> knn_;  // ascending, size <= k
  // In-flight reads: request i uses buffer i; groups_[i] is its page group.
  std::vector<IoRequest> requests_;
  std::vector<PageGroup> groups_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<IoRequest*> completed_;
  std::vector<IoRequest*> submit_batch_;
  std::vector<std::uint8_t> gather_;  // multi-page record scratch
  std::vector<float> raw_;            // raw record as floats
  // Restricted rows as (storage position << 32 | row), in storage order.
  std::vector<std::uint64_t> positions_;
  std::vector<std::uint32_t> position_clusters_;  // positions_[i]'s cluster
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_IVF_SEARCH_H_
