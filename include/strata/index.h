// Opening and searching SSD-resident indexes of any type through one
// interface. Each index type has its own header for building and its own
// options: strata/graph_index.h (DiskANN/Vamana graph), strata/ivf_index.h
// (IVF with Split-RaBitQ, as in "RaBitQ-SSD: Split Codes and Pipelined I/O
// for SSD-Resident Vector Search"). Index::Open reads the directory's
// manifest and opens whichever type it holds.
//
// Thread-safety: an open Index is immutable and may be shared by any number of
// threads; each thread searches through its own Searcher.
#ifndef STRATA_INDEX_H_
#define STRATA_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/dataset.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/search.h"
#include "strata/types.h"

namespace strata {

// Progress of a build: `phase` (e.g. "load", "pq", "graph", "write") and the
// fraction of that phase done, in [0, 1].
using BuildProgress = std::function<void(const char* phase, double fraction)>;

// How to open an index for search.
// Which graph nodes the node cache holds.
enum class CachePolicy : std::uint8_t {
  kBfs,        // nearest the entry point by BFS hops (DiskANN's static cache)
  kFrequency,  // most often expanded by a warm-up sample of queries (Starling)
};

// Which edge pages the decoupled layout's hot-page cache keeps
// (search/edge_page_cache.h).
enum class EdgeCachePolicy : std::uint8_t {
  kNavis,  // admission window, then random eviction (NAVIS-cache)
  kLru,
  kClock,  // FIFO with second chance
  kLfu,    // sampled least-frequently-used, with aging
};

struct OpenOptions {
  // Graph indexes: nodes kept in RAM; their reads are served without I/O.
  // 0 disables the cache. `cache_mib`, when set, sizes the cache in MiB of
  // records instead (and takes precedence). With `decoupled_dir`,
  // `cache_mib` sizes the hot edge-page cache instead (`edge_cache_policy`)
  // and `cache_nodes` must be 0.
  std::uint64_t cache_nodes = 0;
  std::uint64_t cache_mib = 0;
  CachePolicy cache_policy = CachePolicy::kBfs;
  // Frequency policy: warm-up queries, drawn from the index's own vectors
  // (records of random nodes), searched with the baseline beam at L 50.
  std::uint32_t cache_warmup_queries = 1000;
  IoEngine io_engine = IoEngine::kAuto;   // see strata/io.h
  // Verify every file's checksum at open (reads the whole index once).
  bool verify_checksums = false;
  // Graph indexes built all-in-storage: keep the PQ codes in one RAM array
  // anyway (DefraDB's DISKANN opt-in) instead of reading them from the records.
  bool resident_codes = false;
  // Graph indexes: search the decoupled layout (edge lists and vectors in
  // files of their own) written from this index into this directory
  // (WriteDecoupledLayout, `strata decouple`) instead of the node file. The
  // codes must be in RAM; not with a node cache. Empty: the node file.
  std::string decoupled_dir{};
  // The decoupled layout has been changed in place since it was written
  // (InPlaceGraph::Open sets it when it replays a journal): its files may
  // have grown, and only lists still on pages as written are found at open.
  bool decoupled_grown = false;
  // LFU: the best hit share measured on synth1m (bench/results/decoupled_synth1m_2026-12-04.md).
  EdgeCachePolicy edge_cache_policy = EdgeCachePolicy::kLfu;
};

// One thread's handle for searching an index: owns its I/O queue and buffers.
// Not thread-safe; create one per thread with Index::NewSearcher.
class Searcher {
 public:
  virtual ~Searcher() = default;
  // Searches one query (dim() floats). Writes params.k ids and distances
  // (ascending; kInvalidVectorId / +inf past the last found). Distances are
  // squared L2, -<q,x> for ip, 1 - cos for cosine. InvalidArgument for a
  // wrong dimension, NaN or bad parameters (and a zero query under cosine);
  // Corruption / IOError from the SSD. The distances are exact where
  // Index::distances_exact() says so (graph indexes, IVF with raw
  // re-ranking); an IVF index whose records hold extended RaBitQ codes
  // returns those codes' estimates (the ranking is theirs too).
  virtual Status Search(std::span<const float> query, const SearchParams& params,
                        std::span<VectorId> ids, std::span<float> distances,
                        QueryStats* stats) = 0;
  // The I/O engine in use ("uring", "aio", "pread").
  virtual std::string_view engine_name() const = 0;
};

class Index {
 public:
  // Opens the index in `dir`, whatever its type. NotFound if `dir` holds no
  // index; Corruption for damaged or mismatched files; NotSupported for an
  // unknown type or a newer format.
  static Result<std::unique_ptr<Index>> Open(const std::string& dir,
                                             const OpenOptions& options = {});
  virtual ~Index() = default;

  // "graph" or "ivf".
  virtual std::string_view type() const = 0;
  virtual std::uint32_t dim() const = 0;
  virtual Metric metric() const = 0;
  virtual ElementType element_type() const = 0;
  virtual std::uint64_t num_vectors() const = 0;
  // Records served from RAM instead of SSD (graph node cache); 0 if none.
  virtual std::uint64_t cached_nodes() const { return 0; }
  // Whether Searcher::Search returns exact metric distances (true) or
  // estimates (IVF with extended-code records).
  // Whether searches honour SearchParams::restrict_to (rank only those ids)
  // rather than ignoring it.
  virtual bool ranks_restricted() const { return false; }
  // A graph built with labels (GraphBuildOptions::labels): the start row of
  // each label (index = label; kNoLabelStart where no row carries it), for
  // SearchParams::entry_rows with filter_steers_walk. Empty otherwise.
  static constexpr std::uint32_t kNoLabelStart = 0xFFFFFFFFu;
  virtual std::span<const std::uint32_t> label_start_rows() const { return {}; }
  virtual bool distances_exact() const { return true; }
  // RAM held for search (codes, codebooks, caches, maps), in bytes.
  virtual std::size_t memory_bytes() const = 0;
  // Bytes of the index's files on disk.
  virtual std::uint64_t disk_bytes() const = 0;
  // One line such as "graph: 1000000 x 128 float32 l2, R=64, ...".
  virtual std::string Describe() const = 0;
  // A per-thread searcher able to run queries with up to `max_params`'s
  // widths (graph: beam_width <= 128; IVF: inflight); Validate-style
  // InvalidArgument if they are out of range.
  virtual Result<std::unique_ptr<Searcher>> NewSearcher(const SearchParams& max_params) const = 0;
};

// Results and per-query costs of a batch of queries.
struct BatchSearchResult {
  GroundTruth results;            // ids and distances, num_queries x k
  std::vector<QueryStats> stats;  // per query
  double seconds = 0;             // wall time of the whole batch
};

// Searches every row of `queries` (float32, num_queries x dim) with `threads`
// threads (0 = all cores), each with its own searcher and one query in flight
// per thread; results do not depend on the thread count.
Result<BatchSearchResult> SearchBatch(const Index& index, const VectorMatrix& queries,
                                      const SearchParams& params, unsigned threads);

// The same with parameters per query: params_of(q, &p) adjusts a copy of
// `params` for query q, e.g. its filter and restrict_to (filtered search with
// per-query labels, as the NeurIPS'23 filter track asks). Called from the
// searching threads; must not change what NewSearcher sized (beam_width).
using QueryParamsFn = std::function<void(std::size_t query, SearchParams* params)>;
Result<BatchSearchResult> SearchBatch(const Index& index, const VectorMatrix& queries,
                                      const SearchParams& params, unsigned threads,
                                      const QueryParamsFn& params_of);

}  // namespace strata

#endif  // STRATA_INDEX_H_
