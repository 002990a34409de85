// File-level and in-memory entry points of the exact k-NN scan (eval.h).
#include <cblas.h>

#include <algorithm>
#include <string>

#include "eval/exact_knn.h"
#include "strata/eval.h"

namespace strata {
namespace {

bool IsIntegerType(ElementType t) { return t == ElementType::kUint8 || t == ElementType::kInt8; }

// OpenBLAS uses its own thread pool for sgemm; size it to the caller's thread
// count for the duration of one scan so a `--threads 1` run stays on one core.
class BlasThreadsScope {
 public:
  explicit BlasThreadsScope(unsigned threads) : saved_(openblas_get_num_threads()) {
    openblas_set_num_threads(threads == 0 ? saved_ : static_cast<int>(threads));
  }
  ~BlasThreadsScope() { openblas_set_num_threads(saved_); }

 private:
  int saved_;
};

}  // namespace

Status ExactKnnOptions::Validate() const {
  if (k == 0 || k > kMaxDatasetDimension) {
    return Status::InvalidArgument("k must be in 1.." + std::to_string(kMaxDatasetDimension));
  }
  if (query_block == 0) return Status::InvalidArgument("query_block must be positive");
  if (score_block_bytes < (1u << 20)) {
    return Status::InvalidArgument("score_block_bytes must be at least 1 MiB");
  }
  if (base_block_bytes < (1u << 20)) {
    return Status::InvalidArgument("base_block_bytes must be at least 1 MiB");
  }
  return Status::OK();
}

Result<GroundTruth> ComputeGroundTruth(ElementType type, const void* base, std::size_t nb,
                                       const void* queries, std::size_t nq, std::size_t dim,
                                       const ExactKnnOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (dim == 0) return Status::InvalidArgument("ground truth: dimension is 0");
  if (options.k > nb) {
    return Status::InvalidArgument("ground truth: k = " + std::to_string(options.k) +
                                   " exceeds the base size " + std::to_string(nb));
  }
  BlasThreadsScope blas(options.threads);
  ExactKnn knn(options, type, queries, nq, dim);
  STRATA_RETURN_IF_ERROR(knn.AddBase(base, nb, 0));
  return knn.Finish();
}

Result<GroundTruth> ComputeGroundTruth(const std::string& base_path,
                                       const std::string& query_path,
                                       const ExactKnnOptions& options,
                                       const ProgressFn& progress) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  STRATA_ASSIGN_OR_RETURN(auto base, DatasetReader::Open(base_path));
  STRATA_ASSIGN_OR_RETURN(auto query_reader, DatasetReader::Open(query_path));
  if (base->dim() != query_reader->dim()) {
    return Status::InvalidArgument("ground truth: base " + base_path + " has dimension " +
                                   std::to_string(base->dim()) + " but queries " + query_path +
                                   " have " + std::to_string(query_reader->dim()));
  }
  const ElementType btype = base->element_type();
  const ElementType qtype = query_reader->element_type();
  if (IsIntegerType(btype) != IsIntegerType(qtype) || (IsIntegerType(btype) && btype != qtype)) {
    return Status::InvalidArgument(
        "ground truth: base is " + std::string(ElementTypeName(btype)) + " but queries are " +
        std::string(ElementTypeName(qtype)) + "; integer data needs queries of the same type");
  }
  if (options.k > base->rows()) {
    return Status::InvalidArgument("ground truth: k = " + std::to_string(options.k) +
                                   " exceeds the " + std::to_string(base->rows()) +
                                   " rows of " + base_path);
  }
  // Float types are all scored as float32: read both sides converted.
  const bool integer = IsIntegerType(btype);
  const ElementType work_type = integer ? btype : ElementType::kFloat32;
  STRATA_ASSIGN_OR_RETURN(VectorMatrix qm,
                          integer ? query_reader->ReadAll() : query_reader->ReadAllAsFloat());

  BlasThreadsScope blas(options.threads);
  const std::size_t dim = base->dim();
  ExactKnn knn(options, work_type, qm.bytes(), qm.rows(), dim);
  const std::size_t row_bytes = dim * ElementSize(work_type);
  const std::uint64_t block_rows =
      std::max<std::uint64_t>(1, options.base_block_bytes / row_bytes);
  std::vector<std::byte> block(static_cast<std::size_t>(std::min(block_rows, base->rows())) *
                               row_bytes);
  for (std::uint64_t begin = 0; begin < base->rows(); begin += block_rows) {
    const std::uint64_t count = std::min(block_rows, base->rows() - begin);
    if (integer) {
      STRATA_RETURN_IF_ERROR(
          base->ReadRowsRaw(begin, count, std::span<std::byte>(block.data(), count * row_bytes)));
    } else {
      STRATA_RETURN_IF_ERROR(base->ReadRowsAsFloat(
          begin, count, std::span<float>(reinterpret_cast<float*>(block.data()), count * dim)));
    }
    STRATA_RETURN_IF_ERROR(knn.AddBase(block.data(), count, begin));
    if (progress) progress(begin + count, base->rows());
  }
  return knn.Finish();
}

}  // namespace strata
