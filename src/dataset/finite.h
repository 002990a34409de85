// NaN/Inf detection for float rows, reporting the absolute row and column.
#ifndef STRATA_DATASET_FINITE_H_
#define STRATA_DATASET_FINITE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "strata/status.h"

namespace strata::dataset_internal {

// Checks count * dim floats (row-major); on the first NaN/Inf returns
// InvalidArgument "<path>: row R column C is NaN" with R = first_row + r.
Status CheckFiniteFloat(std::string_view path, const float* data, std::uint64_t count,
                        std::uint32_t dim, std::uint64_t first_row);
// Same for float16 bit patterns.
Status CheckFiniteHalf(std::string_view path, const std::uint16_t* data, std::uint64_t count,
                       std::uint32_t dim, std::uint64_t first_row);

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_FINITE_H_
