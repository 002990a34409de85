// The public distance API (include/strata/distance.h) over the kernel tables.
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/distance.h"
#include "strata/distance.h"

namespace strata {
namespace {

Status ValidateDistanceArgs(Metric metric, ElementType type, std::size_t dim) {
  if (static_cast<std::size_t>(metric) >= kernels::kNumMetrics) {
    return Status::InvalidArgument("unknown metric value " +
                                   std::to_string(static_cast<int>(metric)));
  }
  if (static_cast<std::size_t>(type) >= kernels::kNumElementTypes) {
    return Status::InvalidArgument("unknown element type value " +
                                   std::to_string(static_cast<int>(type)));
  }
  if (dim == 0) return Status::InvalidArgument("vector dimension must be > 0");
  if (dim > std::numeric_limits<std::size_t>::max() / ElementSize(type)) {
    return Status::InvalidArgument("vector dimension " + std::to_string(dim) + " is too large");
  }
  return Status::OK();
}

}  // namespace

void DistanceComputer::ComputeMany(const void* query, const void* rows, std::size_t n,
                                   float* out) const {
  const auto* row = static_cast<const std::uint8_t*>(rows);
  for (std::size_t i = 0; i < n; ++i, row += vector_bytes_) out[i] = fn_(query, row, dim_);
}

Result<DistanceComputer> MakeDistance(Metric metric, ElementType type, std::size_t dim) {
  STRATA_RETURN_IF_ERROR(ValidateDistanceArgs(metric, type, dim));
  const kernels::DistanceKernels& k = kernels::BestKernels();
  DistanceComputer d;
  d.fn_ = k.distance[static_cast<std::size_t>(metric)][static_cast<std::size_t>(type)];
  d.dim_ = dim;
  d.vector_bytes_ = dim * ElementSize(type);
  d.metric_ = metric;
  d.type_ = type;
  d.isa_name_ = kernels::IsaName(k.isa);
  return d;
}

Result<float> ComputeDistance(Metric metric, ElementType type, const void* a, const void* b,
                              std::size_t dim) {
  if (a == nullptr || b == nullptr) return Status::InvalidArgument("null vector pointer");
  STRATA_ASSIGN_OR_RETURN(const DistanceComputer d, MakeDistance(metric, type, dim));
  return d(a, b);
}

std::string_view ActiveIsaName() { return kernels::IsaName(kernels::BestKernels().isa); }

}  // namespace strata
