// The IVF index with Split-RaBitQ on SSD (RaBitQ-SSD: Split Codes and Pipelined I/O): building and
// opening.
//
// An IVF index lives in a directory:
//   manifest.json   format version, metric, dims, counts, parameters, build
//                   statistics, every file with its size and checksum
//   ivf.ram         loaded to RAM at open: fine quantizer (rotation), coarse
//                   quantizer (IRQ), centroids, cluster sizes, ids, and per
//                   vector the first D_m bits of its 1-bit RaBitQ code plus 3
//                   factors in FastScan batches of 32 (D_m/8 + 12 bytes)
//   ivf.records     one fixed-size record per vector in checksummed 4 KiB
//                   sectors, each cluster's records contiguous in the same
//                   order as in RAM: the rest of the code, the ex-code and 2
//                   re-ranking factors (or the raw vector with rerank = raw);
//                   read with O_DIRECT during search
// Byte layouts and the search pipelines: docs/ivf.md. Search goes through
// the generic Index / Searcher interface of strata/index.h (SearchParams'
// nprobe, pipeline, inflight and drain_alpha).
#ifndef STRATA_IVF_INDEX_H_
#define STRATA_IVF_INDEX_H_

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include "strata/index.h"

namespace strata {

struct IvfBuildOptions {
  Metric metric = Metric::kL2;  // cosine normalises vectors at ingest
  // C: clusters; 0 = round(N / 1024) (at least 1).
  std::uint64_t clusters = 0;
  // D_m: leading code bits per vector kept in RAM; a multiple of 64 up to
  // D' = dim rounded up to 64; 0 = D' (the whole 1-bit code in RAM).
  std::uint32_t prefix_bits = 0;
  // B: bits per dimension in all (1 in RAM + B - 1 ex-code bits on SSD),
  // 1..9. B = 1 with D_m < D' keeps only the code suffix on SSD.
  std::uint32_t bits = 9;
  // SSD record: "excode" (Split-RaBitQ suffix + ex-code, estimated distances)
  // or "raw" (the float32 vector, exact re-ranking).
  std::string rerank = "excode";
  // Coarse quantizer: "irq" (IVF-RaBitQ over the centroids) or "flat".
  std::string coarse = "irq";
  // Order of a cluster's records: "locality" (page-sized groups of nearby
  // vectors, so a query's survivors share pages) or "centroid" (ascending
  // distance to the centroid only, as RaBitQ-SSD orders them).
  std::string page_order = "locality";
  // Lloyd iterations of each k-means level.
  std::uint32_t kmeans_iterations = 10;
  // Keep a 2-bit code of every vector in RAM (12 + D'/8 + (D' - D_m)/8
  // bytes a vector: 28 at d 128) for filtered searches that list their
  // passing rows: their exact scan then reads about a third of the pages.
  // Merges keep what the index they start from has.
  bool filter_codes = false;
  unsigned threads = 0;    // 0 = all cores
  std::uint64_t seed = 1;  // clustering and rotation seed (deterministic)
  // A request to stop: the build (or merge) returns Aborted at its next
  // phase (or cluster, in a merge) and writes nothing.
  std::stop_token stop;
  // InvalidArgument naming the bad field. (prefix_bits against the data's
  // dimension is checked by BuildIvfIndex.)
  Status Validate() const;
};

// What a build did, for the CLI's report and the manifest.
struct IvfBuildReport {
  std::uint64_t num_vectors = 0;
  std::uint32_t dim = 0;
  std::uint64_t clusters = 0;
  std::uint32_t prefix_bits = 0;   // D_m resolved
  std::uint32_t record_bytes = 0;  // SSD bytes per vector
  std::uint32_t records_per_page = 0;
  double ram_bytes_per_vector = 0;  // RAM part (codes + factors + id), excluding shared tables
  double seconds_total = 0;
  double seconds_load = 0;
  double seconds_cluster = 0;  // k-means + assignment + ordering
  double seconds_encode = 0;   // RaBitQ codes + coarse quantizer
  double seconds_write = 0;
  std::uint64_t index_bytes = 0;  // all files on disk
  std::uint64_t peak_rss_bytes = 0;
};

// Builds an IVF index over the vectors in `base_path` (any supported vector
// format; integer and half types are widened to float32) into `index_dir`
// (created if missing; an existing index there is replaced only when the new
// one is complete: it is written in a staging directory beside it and
// switched in atomically; a failed build leaves the old one). InvalidArgument for bad
// options, NaN/Inf rows, or zero vectors under cosine; reader and I/O errors
// pass through.
Result<IvfBuildReport> BuildIvfIndex(const std::string& base_path, const std::string& index_dir,
                                     const IvfBuildOptions& options,
                                     const BuildProgress& progress = nullptr);

class IvfIndex : public Index {
 public:
  // Opens an IVF index. NotFound if `dir` holds no index; InvalidArgument if
  // it holds another type; Corruption for damaged or mismatched files;
  // NotSupported for a newer format.
  static Result<std::unique_ptr<IvfIndex>> Open(const std::string& dir,
                                                const OpenOptions& options = {});
  ~IvfIndex() override;

  std::string_view type() const override { return "ivf"; }
  std::uint32_t dim() const override;
  Metric metric() const override;
  ElementType element_type() const override;
  std::uint64_t num_vectors() const override;
  bool distances_exact() const override;
  // SearchParams::restrict_to: the listed rows are ranked by their RAM codes
  // and read in order of their distance bounds (no cluster probing).
  bool ranks_restricted() const override;
  std::size_t memory_bytes() const override;
  std::uint64_t disk_bytes() const override;
  // "ivf: 1000000 x 128 float32 l2, C=977, D_m=128/128, B=9, record 136 B,
  // 30 records/page, coarse irq, nprobe 30".
  std::string Describe() const override;
  // Reads in flight up to max_params.inflight (0 = 16; 1..256).
  Result<std::unique_ptr<Searcher>> NewSearcher(const SearchParams& max_params) const override;

  struct Impl;

 private:
  explicit IvfIndex(std::unique_ptr<Impl> impl);
  // Shared with every Searcher, which may outlive this object.
  std::shared_ptr<const Impl> impl_;
};

}  // namespace strata

#endif  // STRATA_IVF_INDEX_H_
