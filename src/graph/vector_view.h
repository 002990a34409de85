// VectorView: read-only float32 rows plus the metric's distance function.
//
// The graph code never owns vectors: it reads them through this view (rows of
// a span the caller keeps alive) and ranks by a "smaller is nearer" distance:
//   kL2           squared Euclidean distance
//   kInnerProduct -<x, y>
//   kCosine       1 - <x, y>  (rows and queries must be unit-normalised by the
//                              caller; the view does not normalise)
// Kernels come from src/kernels (resolved once, held by pointer).
#ifndef STRATA_GRAPH_VECTOR_VIEW_H_
#define STRATA_GRAPH_VECTOR_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <span>

#include "kernels/distance.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::graph {

class VectorView {
 public:
  // An empty view (size 0); only useful as a placeholder before assignment.
  VectorView() = default;

  // Views `rows` (size n * dim, row-major, not owned: must outlive the view)
  // as n vectors of `dim` floats. `kernels` null = kernels::BestKernels().
  // InvalidArgument if dim == 0, rows.size() is not a multiple of dim, the row
  // count does not fit a uint32 id (n >= 2^32 - 1; larger bases are built in
  // shards, see vamana_builder.h) or the metric is unknown.
  static Result<VectorView> Create(std::span<const float> rows, std::size_t dim, Metric metric,
                                   const kernels::DistanceKernels* kernels = nullptr);

  std::uint32_t size() const { return n_; }
  std::size_t dim() const { return dim_; }
  Metric metric() const { return metric_; }
  std::span<const float> rows() const { return {data_, static_cast<std::size_t>(n_) * dim_}; }

  // Row i (i < size()); `dim()` floats.
  const float* Row(std::uint32_t i) const { return data_ + static_cast<std::size_t>(i) * dim_; }

  // Distance between two arbitrary vectors of dim() floats.
  float Distance(const float* a, const float* b) const {
    const float raw = raw_(a, b, dim_);
    switch (metric_) {
      case Metric::kL2:
        return raw;
      case Metric::kInnerProduct:
        return -raw;
      case Metric::kCosine:
        return 1.0f - raw;
    }
    return raw;
  }
  // Distance from `query` (dim() floats) to row j.
  float DistanceTo(const float* query, std::uint32_t j) const { return Distance(query, Row(j)); }
  // Distance between rows i and j.
  float Distance(std::uint32_t i, std::uint32_t j) const { return Distance(Row(i), Row(j)); }

  // Hints the CPU to fetch row j (its first few cache lines) ahead of use.
  void Prefetch(std::uint32_t j) const {
    const char* p = reinterpret_cast<const char*>(Row(j));
    for (std::size_t off = 0; off < prefetch_bytes_; off += 64) __builtin_prefetch(p + off);
  }

 private:
  const float* data_ = nullptr;
  std::uint32_t n_ = 0;
  std::size_t dim_ = 0;
  Metric metric_ = Metric::kL2;
  float (*raw_)(const float*, const float*, std::size_t) = nullptr;  // l2_f32 or ip_f32
  std::size_t prefetch_bytes_ = 0;
};

}  // namespace strata::graph

#endif  // STRATA_GRAPH_VECTOR_VIEW_H_
