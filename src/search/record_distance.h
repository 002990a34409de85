// Exact distance between a preprocessed float query and a stored record
// vector of any element type (float32/16, bfloat16, uint8, int8), in the
// index's metric: squared L2, -<q, x> for inner product, 1 - cos for cosine.
#ifndef STRATA_SEARCH_RECORD_DISTANCE_H_
#define STRATA_SEARCH_RECORD_DISTANCE_H_

#include <cstddef>
#include <span>
#include <vector>

#include "kernels/distance.h"
#include "strata/types.h"

namespace strata::search {

// Holds the conversion scratch; one per search thread.
class RecordDistance {
 public:
  RecordDistance(Metric metric, ElementType type, std::size_t dim,
                 const kernels::DistanceKernels* kernels)
      : metric_(metric), type_(type), dim_(dim), kernels_(kernels), scratch_(dim) {}

  // `query`: dim floats (unit length under cosine); `vector`: the record's
  // stored bytes. Float records were normalised at build under cosine;
  // integer records are scored with their exact cosine.
  float operator()(const float* query, std::span<const std::byte> vector);

 private:
  Metric metric_;
  ElementType type_;
  std::size_t dim_;
  const kernels::DistanceKernels* kernels_;
  std::vector<float> scratch_;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_RECORD_DISTANCE_H_
