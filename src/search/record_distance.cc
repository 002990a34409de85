#include "search/record_distance.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace strata::search {

float RecordDistance::operator()(const float* query, std::span<const std::byte> vector) {
  const float* x;
  switch (type_) {
    case ElementType::kFloat32:
      x = reinterpret_cast<const float*>(vector.data());
      break;
    case ElementType::kFloat16:
      kernels::HalfToFloatN(reinterpret_cast<const std::uint16_t*>(vector.data()),
                            scratch_.data(), dim_);
      x = scratch_.data();
      break;
    case ElementType::kBFloat16:
      kernels::BFloat16ToFloatN(reinterpret_cast<const std::uint16_t*>(vector.data()),
                                scratch_.data(), dim_);
      x = scratch_.data();
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < dim_; ++i) {
        scratch_[i] = static_cast<float>(reinterpret_cast<const std::uint8_t*>(vector.data())[i]);
      }
      x = scratch_.data();
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < dim_; ++i) {
        scratch_[i] = static_cast<float>(reinterpret_cast<const std::int8_t*>(vector.data())[i]);
      }
      x = scratch_.data();
      break;
    default:
      return std::numeric_limits<float>::infinity();
  }
  switch (metric_) {
    case Metric::kL2: return kernels_->l2_f32(query, x, dim_);
    case Metric::kInnerProduct: return -kernels_->ip_f32(query, x, dim_);
    case Metric::kCosine: {
      if (type_ == ElementType::kFloat32 || type_ == ElementType::kFloat16 ||
          type_ == ElementType::kBFloat16) {
        return 1.0f - kernels_->ip_f32(query, x, dim_);
      }
      const float xx = kernels::SquaredNorm(x, dim_);
      return xx == 0.0f ? 1.0f : 1.0f - kernels_->ip_f32(query, x, dim_) / std::sqrt(xx);
    }
  }
  return std::numeric_limits<float>::infinity();
}

}  // namespace strata::search
