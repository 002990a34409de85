// ExactKnn: exact k-nearest-neighbour search (ground truth) over a base that
// is streamed in blocks, so memory stays bounded for bases larger than RAM.
//
// Float bases (float32/float16/bfloat16) are scored with BLAS: one sgemm per
// (query block x base block) gives <q,x>, from which |q|^2 - 2<q,x> + |x|^2
// (L2), -<q,x> (IP) or 1 - <q,x> on normalised rows (cosine) follow. sgemm's
// cancellation error can reorder near-ties, so every row whose approximate
// distance comes within a small margin of a query's current k-th distance is
// re-scored with the exact distance kernel, and only exact distances enter
// the result: the reported neighbours and distances are those of a plain
// exact scan. Integer bases (uint8/int8) use the exact integer kernels.
//
// Usage: construct, AddBase() every block, then Finish(). Not thread-safe;
// internally parallel over options.threads (OpenBLAS and our own loops).
#ifndef STRATA_EVAL_EXACT_KNN_H_
#define STRATA_EVAL_EXACT_KNN_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/distance.h"
#include "strata/eval.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

class ExactKnn {
 public:
  struct Candidate {
    float dist;  // exact distance
    VectorId id;
  };

  // `queries`: nq * dim values of `type`, copied (and for cosine on float
  // types normalised). `options` must have passed Validate().
  ExactKnn(const ExactKnnOptions& options, ElementType type, const void* queries,
           std::size_t nq, std::size_t dim);

  // Scores `rows` (n * dim values of the element type given at construction)
  // whose ids are first_id .. first_id + n - 1.
  Status AddBase(const void* rows, std::size_t n, VectorId first_id);

  // The k nearest per query, ascending distance, ties broken by smaller id.
  // When the base has fewer than k rows the tail holds kInvalidVectorId/+inf.
  GroundTruth Finish();

 private:
  void AddFloatBlock(const float* rows, std::size_t n, VectorId first_id);
  void AddIntegerBlock(const void* rows, std::size_t n, VectorId first_id);
  float FloatDistance(const float* q, const float* x) const;
  float IntegerDistance(std::size_t q, const void* row) const;
  void Offer(std::size_t q, float dist, VectorId id);
  float Threshold(std::size_t q) const;

  ExactKnnOptions options_;
  ElementType type_;
  std::size_t nq_, dim_;
  const kernels::DistanceKernels* kernels_;
  std::vector<float> queries_;             // nq * dim as float (normalised for cosine)
  std::vector<float> query_norms_;         // |q|^2
  std::vector<std::uint8_t> raw_queries_;  // original bytes, integer types only
  std::vector<std::vector<Candidate>> heaps_;  // per query: max-heap of the best k
  std::vector<float> block_;               // current base block as float
  std::vector<float> block_norms_;         // |x|^2 of block_ rows
  std::vector<float> scores_;              // sgemm output, query_block x base sub-block
};

}  // namespace strata

#endif  // STRATA_EVAL_EXACT_KNN_H_
