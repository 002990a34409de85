// Building, opening and searching SSD-resident indexes.
//
// A graph index (DiskANN/Vamana) lives in a directory:
//   manifest.json   format version, metric, dims, counts, parameters, build
//                   statistics, and every file with its size and checksum
//   graph.nodes     node records (full vector + neighbour ids) in checksummed
//                   4 KiB sectors, read with O_DIRECT during search
//   pq.bin          PQ codebook and one code per vector, loaded to RAM at open
// Byte layouts: docs/format.md.
//
// Thread-safety: an open GraphIndex is immutable and may be shared by any
// number of threads; each thread searches through its own GraphSearcher.
#ifndef STRATA_INDEX_H_
#define STRATA_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strata/dataset.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/search.h"
#include "strata/types.h"

namespace strata {

// Build parameters, named as DiskANN names them.
struct GraphBuildOptions {
  Metric metric = Metric::kL2;   // cosine normalises vectors at ingest
  std::uint32_t R = 64;          // maximum out-degree
  std::uint32_t L = 125;         // search list size during the build (L_build)
  float alpha = 1.2f;            // RobustPrune's distance threshold (>= 1)
  // PQ code bytes per vector kept in RAM; 0 picks max(min(dim, 32), min(dim / 4, 96)).
  std::uint32_t pq_bytes = 0;
  unsigned threads = 0;          // 0 = all cores
  std::uint64_t seed = 1;        // graph and PQ training seed (deterministic on 1 thread)
  Status Validate() const;
};

// What a build did, for the CLI's report and the manifest.
struct GraphBuildReport {
  std::uint64_t num_vectors = 0;
  std::uint32_t dim = 0;
  std::uint32_t pq_bytes = 0;
  double seconds_total = 0;
  double seconds_load = 0;
  double seconds_pq = 0;
  double seconds_graph = 0;
  double seconds_write = 0;
  double average_degree = 0;
  std::uint32_t max_degree = 0;
  std::uint64_t index_bytes = 0;   // all files on disk
  std::uint64_t peak_rss_bytes = 0;
};

// Progress of a build: `phase` ("load", "pq", "graph", "write") and the
// fraction of that phase done, in [0, 1].
using BuildProgress = std::function<void(const char* phase, double fraction)>;

// Builds a graph index over the vectors in `base_path` (any supported vector
// format) into directory `index_dir` (created if missing; an existing index
// there is replaced only when the new one is complete: the manifest is written
// last). InvalidArgument for bad options, NaN/Inf rows, or zero vectors under
// cosine; reader and I/O errors pass through.
Result<GraphBuildReport> BuildGraphIndex(const std::string& base_path, const std::string& index_dir,
                                         const GraphBuildOptions& options,
                                         const BuildProgress& progress = nullptr);

// How to open an index for search.
struct OpenOptions {
  // Nodes nearest the entry point (BFS hops) kept in RAM: their reads are
  // served without I/O. 0 disables the cache.
  std::uint64_t cache_nodes = 0;
  IoEngine io_engine = IoEngine::kAuto;   // see strata/io.h
  // Verify every file's checksum at open (reads the whole index once).
  bool verify_checksums = false;
};

class GraphSearcher;

class GraphIndex {
 public:
  // NotFound if `dir` holds no index; Corruption for damaged or mismatched
  // files; NotSupported for a newer format.
  static Result<std::unique_ptr<GraphIndex>> Open(const std::string& dir,
                                                  const OpenOptions& options = {});
  ~GraphIndex();

  std::uint32_t dim() const;
  Metric metric() const;
  ElementType element_type() const;
  std::uint64_t num_vectors() const;
  std::uint64_t cached_nodes() const;
  // RAM held for search (PQ codes and codebook, node cache), in bytes.
  std::size_t memory_bytes() const;
  // One line: "graph: 1000000 x 128 float32 l2, R=64, 5 records/sector, pq 32 B".
  std::string Describe() const;

  // A per-thread searcher with its own I/O queue and buffers; beam widths up
  // to `max_beam_width` (<= 128).
  Result<std::unique_ptr<GraphSearcher>> NewSearcher(std::uint32_t max_beam_width = 64) const;

  struct Impl;

 private:
  explicit GraphIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

class GraphSearcher {
 public:
  ~GraphSearcher();
  // Searches one query (dim() floats). Writes params.k ids and distances
  // (ascending; kInvalidVectorId / +inf past the last found). Distances are
  // squared L2, -<q,x> for ip, 1 - cos for cosine. InvalidArgument for a
  // wrong dimension or NaN; Corruption / IOError from the SSD.
  Status Search(std::span<const float> query, const SearchParams& params,
                std::span<VectorId> ids, std::span<float> distances, QueryStats* stats);
  // The I/O engine in use ("uring", "aio", "pread").
  std::string_view engine_name() const;

  struct Impl;

 private:
  friend class GraphIndex;
  explicit GraphSearcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Results and per-query costs of a batch of queries.
struct BatchSearchResult {
  GroundTruth results;            // ids and distances, num_queries x k
  std::vector<QueryStats> stats;  // per query
  double seconds = 0;             // wall time of the whole batch
};

// Searches every row of `queries` (float32, num_queries x dim) with `threads`
// threads (0 = all cores), each with its own searcher; results do not depend
// on the thread count.
Result<BatchSearchResult> SearchBatch(const GraphIndex& index, const VectorMatrix& queries,
                                      const SearchParams& params, unsigned threads);

}  // namespace strata

#endif  // STRATA_INDEX_H_
