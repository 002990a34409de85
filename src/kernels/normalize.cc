// L2 norms and normalisation of float32 vectors (cosine ingest helpers).
#include <cmath>
#include <cstddef>
#include <string>

#include "kernels/distance.h"
#include "strata/distance.h"

namespace strata::kernels {
namespace {

// Squared norm in double. The SIMD float32 sum is accurate for ordinary
// data; when it overflows (elements beyond ~1.8e19) or is so small that the
// squares went subnormal (below 1e-30 the lost bits can matter) it is redone
// in double, which squares any finite float without overflow or underflow to
// zero. NaN/Inf elements give NaN/Inf.
double RobustSquaredNorm(const float* a, std::size_t dim) {
  const double fast = BestKernels().ip_f32(a, a, dim);
  if (fast >= 1e-30 && std::isfinite(fast)) return fast;
  double s = 0;
  for (std::size_t i = 0; i < dim; ++i) s += static_cast<double>(a[i]) * a[i];
  return s;
}

// Multiplies by 1/|a| in double: the factor itself may not fit a float when
// the norm is tiny.
void Scale(float* a, std::size_t dim, double norm2) {
  const double inv = 1.0 / std::sqrt(norm2);
  for (std::size_t i = 0; i < dim; ++i) a[i] = static_cast<float>(a[i] * inv);
}

}  // namespace

float SquaredNorm(const float* a, std::size_t dim) { return BestKernels().ip_f32(a, a, dim); }

bool NormalizeInPlace(float* a, std::size_t dim) {
  const double n2 = RobustSquaredNorm(a, dim);
  if (!(n2 > 0) || !std::isfinite(n2)) return false;
  Scale(a, dim, n2);
  return true;
}

}  // namespace strata::kernels

namespace strata {

Result<std::size_t> NormalizeRows(float* rows, std::size_t n, std::size_t dim) {
  if (dim == 0) return Status::InvalidArgument("vector dimension must be > 0");
  if (n > 0 && rows == nullptr) return Status::InvalidArgument("null rows pointer");
  std::size_t zero_rows = 0;
  for (std::size_t r = 0; r < n; ++r) {
    float* row = rows + r * dim;
    const double n2 = kernels::RobustSquaredNorm(row, dim);
    if (!std::isfinite(n2)) {
      return Status::InvalidArgument("row " + std::to_string(r) +
                                     " has a NaN or infinite element; cannot normalise");
    }
    if (n2 == 0) {
      ++zero_rows;
      continue;
    }
    kernels::Scale(row, dim, n2);
  }
  return zero_rows;
}

}  // namespace strata
