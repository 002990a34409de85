#include "dataset/finite.h"

#include <cmath>
#include <cstring>
#include <string>

#include "dataset/half.h"

namespace strata::dataset_internal {

namespace {

Status NonFinite(std::string_view path, std::uint64_t row, std::uint64_t col, bool nan) {
  return Status::InvalidArgument(std::string(path) + ": row " + std::to_string(row) + " column " +
                                 std::to_string(col) + " is " + (nan ? "NaN" : "Inf") +
                                 " (non-finite float data; disable the check to read it anyway)");
}

}  // namespace

Status CheckFiniteFloat(std::string_view path, const float* data, std::uint64_t count,
                        std::uint32_t dim, std::uint64_t first_row) {
  const std::size_t n = static_cast<std::size_t>(count) * dim;
  // Fast pass on the exponent bits (vectorisable); locate only on a hit.
  std::uint32_t any = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, data + i, 4);
    any |= static_cast<std::uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  if (!any) return Status::OK();
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(data[i]))
      return NonFinite(path, first_row + i / dim, i % dim, std::isnan(data[i]));
  }
  return Status::OK();
}

Status CheckFiniteHalf(std::string_view path, const std::uint16_t* data, std::uint64_t count,
                       std::uint32_t dim, std::uint64_t first_row) {
  const std::size_t n = static_cast<std::size_t>(count) * dim;
  for (std::size_t i = 0; i < n; ++i) {
    if (HalfIsNonFinite(data[i])) {
      return NonFinite(path, first_row + i / dim, i % dim, (data[i] & 0x3ffu) != 0);
    }
  }
  return Status::OK();
}

}  // namespace strata::dataset_internal
