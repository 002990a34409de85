// Per-query search parameters and counters shared by every index type.
#ifndef STRATA_SEARCH_H_
#define STRATA_SEARCH_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strata/status.h"

namespace strata {

// The read pipelines of the IVF index (RaBitQ-SSD, Table 1), from the simplest
// to the default.
enum class IvfPipeline : std::uint8_t {
  kNaive,       // one blocking read per surviving candidate
  kCoalesced,   // survivors of one page share one blocking read
  kOverlapped,  // reads submitted as the scan leaves a page, harvested by polling
  kScheduled,   // pages in a priority set by lower bound, at most `inflight` in flight
  kFull,        // scheduled + the alpha-quantile drain threshold
};

// "naive", "coalesced", "overlapped", "scheduled", "full".
const char* IvfPipelineName(IvfPipeline p);
// InvalidArgument for an unknown name.
Status ParseIvfPipeline(const std::string& name, IvfPipeline* out);

// Decides which index ids (the index's own row ids, as a Searcher returns
// them) a search may return. The walk still traverses rejected ids (a
// graph's deleted node keeps routing queries; an IVF search skips reading
// its record). Called from the searching thread; must be thread-safe if one
// filter is shared by several searches.
class IdFilter {
 public:
  virtual ~IdFilter() = default;
  virtual bool Accept(std::uint64_t id) const = 0;
};

// Knobs of one query. Graph indexes use list_size and beam_width; IVF indexes
// use nprobe, pipeline, inflight and drain_alpha. Fields an index type does
// not use are ignored by it.
struct SearchParams {
  // Upper bounds Validate enforces: a query's candidate list, results and
  // expansions are allocated per search, so a caller (a Python or HTTP
  // client) must not be able to ask for gigabytes or overflow 4 * L.
  static constexpr std::uint32_t kMaxK = 100000;
  static constexpr std::uint32_t kMaxListSize = 1000000;
  static constexpr std::uint32_t kMaxExpansions = 100000000;

  std::uint32_t k = 10;          // neighbours wanted
  std::uint32_t list_size = 50;  // L: candidate list size (>= k); larger = more recall, more reads
  std::uint32_t beam_width = 4;  // W: node records read per round (1..128)
  // Most nodes expanded per query; 0 means max(4 L, 32) (bounds memory and time).
  std::uint32_t max_expansions = 0;

  // Graph I/O techniques (the OctopusANN design-space study), each a switch; the defaults are the
  // "default" profile, the best measured composition (docs/graph-search.md).
  // Start from the nearest nodes of the in-RAM navigation graph (MemGraph)
  // when the index has one, instead of the medoid.
  bool mem_graph = true;
  // MemGraph walk list size (0 = max(k, 16)); its best `beam_width` nodes
  // seed the disk search.
  std::uint32_t mem_graph_L = 0;
  // Page search: expand every record of each fetched page, not only the one
  // asked for (pays off with page-shuffled layouts).
  bool page_search = true;
  // Dynamic width: start with `min_beam_width` reads per round and widen up
  // to beam_width once the search converges (PipeANN's rule). Off in the
  // default profile: on synth1m it read 13 % fewer pages but cost 30 % of QPS
  // (more rounds; at 2 threads latency, not the disk, bounds throughput).
  bool dynamic_width = false;
  std::uint32_t min_beam_width = 2;
  // Pipeline: keep up to beam_width reads in flight and issue the next read
  // as soon as any completes, instead of waiting for the whole round.
  bool pipelined = false;
  // Decoupled graph layouts (OpenOptions::decoupled_dir): the walk reads
  // edge pages only, and full vectors are read afterwards to re-rank, in
  // code order, `rerank_group` at a time, until a group leaves the exact
  // top-k unchanged (NAVIS's speculative re-ranking; Sun et al., "NAVIS:
  // Concurrent Search and Update with Low Position-Seeking Overhead in
  // On-SSD Graph-Based Vector Search"). 0: re-rank the whole candidate list,
  // the default: on synth1m groups of 8 read 32 % fewer vectors at L 100 but
  // capped recall@10 at 0.994, for no QPS gain
  // (bench/results/decoupled_synth1m_2026-12-04.md).
  static constexpr std::uint32_t kMaxRerankGroup = 64;
  std::uint32_t rerank_group = 0;

  // IVF: clusters probed per query (0 = the index's default).
  std::uint32_t nprobe = 0;
  IvfPipeline pipeline = IvfPipeline::kFull;
  // IVF: most page reads in flight per query (0 = 16, RaBitQ-SSD's Q for <= 16
  // threads; 32 for a scan of listed rows, restrict_to, whose reads are
  // nearly all known at its start).
  std::uint32_t inflight = 0;
  // IVF, full pipeline: the drain threshold is the distance of rank
  // round(drain_alpha k) among the results so far (1 = behave as the
  // scheduled pipeline).
  float drain_alpha = 0.4f;
  // IVF, scheduled and full pipelines: until k records are re-ranked there
  // is no dist_k to prune against, and RaBitQ-SSD's scheduler fills all Q
  // slots with unpruned pages. With fill_first it keeps in flight only the
  // pages whose candidates are needed to reach k results, so the pages that
  // follow are pruned against a real dist_k (synth1m, nprobe 2: 31.8 -> 21.8
  // pages per query, QPS up; bench/results/ivf_synth1m.md).
  bool fill_first = true;
  // IVF: the rank whose distance prunes bounds and pages (0 = k; at most k);
  // the k of dist_k, fill_first and drain_alpha above.
  // A caller that re-ranks the results exactly asks for more than k but
  // prunes at the k-th: the results past it are those met on the way, which
  // absorb the estimate's swaps around the k-th without reads of their own
  // (the collection's restricted scans on extended codes: 2k kept, pruned
  // at k).
  std::uint32_t prune_rank = 0;

  // Ids a search may return (null = all); not owned, must outlive the call.
  const IdFilter* filter = nullptr;
  // A hint for selective filters, whose passing ids the caller can list
  // (inverted lists of labels): a superset of the ids `filter` accepts.
  // Graph indexes with codes in RAM then rank only these ids by their codes
  // and compute exact distances for the best list_size of them, reading
  // their records from SSD, instead of walking a graph few of whose nodes
  // pass (the exact-scan fallback of filtered search, as the NeurIPS'23
  // filter track's faiss baseline does); IVF indexes estimate each listed
  // id from its RAM code and read the pages whose bound can still beat the
  // k-th (Index::ranks_restricted). Others ignore it and walk; the filter
  // decides what is returned either way. Not owned.
  const std::vector<std::uint64_t>* restrict_to = nullptr;
  // The exact scan over restrict_to reads records in code order and stops
  // once this many passing records in a row leave the exact top-k
  // unchanged (the convergence rule of NAVIS's speculative re-ranking;
  // Sun et al., "NAVIS: Concurrent Search and Update with Low
  // Position-Seeking Overhead in On-SSD Graph-Based Vector Search"), rather
  // than reading all of the best list_size. 0: read them all.
  std::uint32_t exact_scan_patience = 16;
  // Rows that pass the filter, when the caller can list some (a sample of an
  // inverted list): a filtered walk on a graph with codes in RAM also starts
  // from them, ranked by code, so that it begins among passing points rather
  // than only at the unfiltered nearest ones (the per-label start points of
  // Gollapudi et al., "Filtered-DiskANN: Graph Algorithms for Approximate
  // Nearest Neighbor Search with Filters", WWW 2023, for any filter). At
  // most kMaxEntryRows are used. Not owned.
  static constexpr std::size_t kMaxEntryRows = 256;
  const std::vector<std::uint64_t>* entry_rows = nullptr;
  // On a graph built with labels (Index::label_start_rows non-empty): the
  // filter also steers the walk, which scores and expands only neighbours
  // the filter accepts (Filtered-DiskANN's FilteredGreedySearch) and starts
  // from entry_rows alone (the queried labels' start rows), since the label
  // build keeps each label's rows connected among themselves. The filter
  // must be cheap (evaluated per neighbour, ids are rows) and entry_rows set.
  // Ignored by other indexes.
  bool filter_steers_walk = false;
  // The fraction of the index the filter passes, when the caller knows it
  // (a payload index's bound; 1 = unknown or all). A filtered walk returns
  // only passing points, so it needs about k / f candidates to find k:
  // graph searches widen L to 2 k / f (at most 8 L), IVF searches probe
  // 0.1 / f times more clusters (at most 16x). Both at least as given.
  float filter_fraction = 1.0f;
  // The list size and the clusters probed after filter_fraction (nprobe 0:
  // the index's default, `default_nprobe`).
  std::uint32_t EffectiveListSize() const;
  std::uint32_t EffectiveNprobe(std::uint32_t default_nprobe) const;

  // InvalidArgument naming the bad field.
  Status Validate() const;
};

// At most SearchParams::kMaxEntryRows of `rows`, evenly spaced over it (all
// of them when there are fewer): entry rows for a filtered walk.
std::vector<std::uint64_t> SampleEntryRows(std::span<const std::uint64_t> rows);

// What one query cost; summed/averaged by the benchmark harness.
struct QueryStats {
  std::uint32_t pages_read = 0;      // 4 KiB sectors read from SSD (O_DIRECT)
  std::uint32_t reads = 0;           // read requests issued
  std::uint32_t hops = 0;            // search rounds (beam iterations)
  std::uint32_t expanded = 0;        // nodes expanded (read or cached)
  std::uint32_t cache_hits = 0;      // expansions served from the in-RAM node cache
  std::uint32_t full_distances = 0;  // exact (full-precision) distance computations
  std::uint32_t pq_distances = 0;    // compressed-code distance computations
  double io_wait_us = 0;             // time blocked waiting for reads
  double latency_us = 0;             // wall time of the whole query
  std::uint32_t page_records = 0;    // graph: other records of fetched pages expanded (page search)
  std::uint32_t mem_graph_distances = 0;  // graph: exact distances in the MemGraph walk
  // IVF pipeline columns (RaBitQ-SSD, Table 1); zero for graph indexes.
  std::uint32_t clusters_probed = 0;  // clusters scanned in RAM
  std::uint32_t survivors = 0;        // candidates passing the RAM lower-bound screen
  std::uint32_t pages_dropped = 0;    // candidate pages pruned before their read
  std::uint32_t wasted_reads = 0;     // pages read whose records all failed the re-check
  std::uint32_t reranked = 0;         // records re-ranked from SSD data
  double drain_us = 0;                // time after the scan finished, draining reads
  // Filtered collection searches.
  std::uint32_t filter_candidates = 0;  // candidates of the exact-scan fallback (0: a walk)
  std::uint32_t payload_reads = 0;      // stored payloads read to decide the filter
};

// Sets the graph technique switches of `params` to a named profile:
// "baseline" (DiskANN's search: fixed beam width, no page search, no
// MemGraph, no pipeline) or "default" (the best measured composition).
// InvalidArgument for an unknown name.
Status ApplySearchProfile(const std::string& profile, SearchParams* params);

// Aggregate of a batch of queries: what `strata search` and `strata bench` report.
struct SearchSummary {
  std::size_t num_queries = 0;
  double seconds = 0;  // wall time of the batch
  double qps = 0;      // num_queries / seconds
  double mean_latency_us = 0;
  double p50_latency_us = 0;
  double p99_latency_us = 0;
  double mean_pages_read = 0;  // 4 KiB sectors per query
  double mean_reads = 0;
  double mean_hops = 0;
  double mean_expanded = 0;
  double mean_cache_hits = 0;
  double mean_full_distances = 0;
  double mean_pq_distances = 0;
  double mean_io_wait_us = 0;
  double io_wait_share = 0;         // sum of I/O wait / sum of latency
  double mean_page_records = 0;     // graph: page-search expansions per query
  double mean_clusters_probed = 0;  // IVF columns, zero for graph indexes
  double mean_survivors = 0;
  double mean_pages_dropped = 0;
  double mean_wasted_reads = 0;
  double mean_reranked = 0;
  double drain_share = 0;  // sum of drain time / sum of latency
};

// Means and latency percentiles over per-query stats of a batch that took
// `seconds` of wall time.
SearchSummary Summarize(const std::vector<QueryStats>& stats, double seconds);

}  // namespace strata

#endif  // STRATA_SEARCH_H_
