// Evaluation: exact k-NN ground truth and recall@k.
//
// Ground truth is computed by an exact scan (BLAS-accelerated for float data,
// exact integer kernels for uint8/int8), streaming the base in blocks so that
// memory stays bounded for bases larger than RAM. Recall is tie-aware: a
// returned neighbour at the same distance as the k-th true one counts as
// correct (big-ann-benchmarks' rule), so equal-distance duplicates never
// penalise an index.
#ifndef STRATA_EVAL_H_
#define STRATA_EVAL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "strata/dataset.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

// Options of an exact k-NN scan.
struct ExactKnnOptions {
  std::size_t k = 100;            // neighbours per query, 1..kMaxDatasetDimension
  Metric metric = Metric::kL2;    // cosine: rows normalised (float) / exact cosine (integer)
  unsigned threads = 0;           // worker threads (also OpenBLAS's); 0 = all cores
  std::size_t query_block = 4096; // queries scored per sgemm (rows of the score matrix)
  // Bytes of the per-sgemm score matrix (query_block x base sub-block floats).
  std::size_t score_block_bytes = 64u << 20;
  // Bytes of base rows read from the file per block (bounds memory for
  // bases larger than RAM).
  std::size_t base_block_bytes = 256u << 20;
  // Filtered ground truth: when set, base row `id` is a candidate of query
  // `query` only if accept(query, id) (called from several threads at once).
  // Queries with fewer than k accepted rows get kInvalidVectorId / +inf in
  // the tail (written as the files' missing-result sentinel).
  std::function<bool(std::size_t query, VectorId id)> accept;
  Status Validate() const;
};

// Progress callback: rows of the base scanned so far, of `total`.
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Exact k nearest base rows for every query; base and queries may be in any
// supported vector format and element type (both the same type family: float
// types are compared as float32, integer types must match exactly).
// InvalidArgument on a dimension mismatch, k larger than the base, or mixed
// integer/float types; errors of the readers pass through.
Result<GroundTruth> ComputeGroundTruth(const std::string& base_path,
                                       const std::string& query_path,
                                       const ExactKnnOptions& options,
                                       const ProgressFn& progress = {});

// In-memory form: `base` (nb * dim) and `queries` (nq * dim) in `type`.
Result<GroundTruth> ComputeGroundTruth(ElementType type, const void* base, std::size_t nb,
                                       const void* queries, std::size_t nq, std::size_t dim,
                                       const ExactKnnOptions& options);

// Recall@k of `results` against `gt` (see the tie rule above).
struct RecallReport {
  std::size_t num_queries = 0;
  std::size_t k = 0;
  double mean_recall = 0;          // mean over queries of |hits| / k
  double min_recall = 0;           // worst query
  std::vector<double> per_query;   // size num_queries
};

// InvalidArgument when the query counts differ or either side holds fewer than
// k neighbours per query. Ties need gt distances; without them (.ivecs) only
// exact id matches count.
Result<RecallReport> ComputeRecall(const GroundTruth& results, const GroundTruth& gt,
                                   std::size_t k);

}  // namespace strata

#endif  // STRATA_EVAL_H_
