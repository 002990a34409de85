#include "graph/vector_view.h"

#include <algorithm>
#include <limits>
#include <string>

namespace strata::graph {

Result<VectorView> VectorView::Create(std::span<const float> rows, std::size_t dim, Metric metric,
                                      const kernels::DistanceKernels* kernels) {
  if (dim == 0) return Status::InvalidArgument("VectorView: dim must be > 0");
  if (rows.size() % dim != 0) {
    return Status::InvalidArgument("VectorView: rows.size() " + std::to_string(rows.size()) +
                                   " is not a multiple of dim " + std::to_string(dim));
  }
  const std::size_t n = rows.size() / dim;
  // Ids are uint32 inside one in-memory graph; 0xFFFFFFFF is reserved as "no node".
  if (n >= std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("VectorView: " + std::to_string(n) +
                                   " rows exceed the uint32 id space of one graph shard");
  }
  if (kernels == nullptr) kernels = &kernels::BestKernels();
  VectorView v;
  v.data_ = rows.data();
  v.n_ = static_cast<std::uint32_t>(n);
  v.dim_ = dim;
  v.metric_ = metric;
  switch (metric) {
    case Metric::kL2:
      v.raw_ = kernels->l2_f32;
      break;
    case Metric::kInnerProduct:
    case Metric::kCosine:
      v.raw_ = kernels->ip_f32;
      break;
    default:
      return Status::InvalidArgument("VectorView: unknown metric");
  }
  if (v.raw_ == nullptr) return Status::NotSupported("VectorView: kernel table lacks float32 kernels");
  // Prefetching more than a few lines only competes with the hardware
  // prefetcher, which follows the sequential read once it starts.
  v.prefetch_bytes_ = std::min<std::size_t>(dim * sizeof(float), 4 * 64);
  return v;
}

}  // namespace strata::graph
