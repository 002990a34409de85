// Compile-time mapping between C++ element types and ElementType, and the
// element type each file format stores.
#ifndef STRATA_DATASET_ELEMENT_TRAITS_H_
#define STRATA_DATASET_ELEMENT_TRAITS_H_

#include <cstdint>
#include <optional>
#include <type_traits>

#include "strata/dataset.h"
#include "strata/types.h"

namespace strata::dataset_internal {

// Whether values of C++ type T can hold elements of `type`: float <-> float32,
// uint16_t <-> float16/bfloat16 bit patterns, uint8_t, int8_t.
template <typename T>
constexpr bool TypeMatches(ElementType type) {
  if constexpr (std::is_same_v<T, float>) {
    return type == ElementType::kFloat32;
  } else if constexpr (std::is_same_v<T, std::uint16_t>) {
    return type == ElementType::kFloat16 || type == ElementType::kBFloat16;
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    return type == ElementType::kUint8;
  } else if constexpr (std::is_same_v<T, std::int8_t>) {
    return type == ElementType::kInt8;
  } else {
    return false;
  }
}

// The single element type of a fixed-type vector format; nullopt for .npy
// (type in the header) and for the ground-truth formats.
inline std::optional<ElementType> FixedElementType(DatasetFormat format) {
  switch (format) {
    case DatasetFormat::kFbin:
    case DatasetFormat::kFvecs:
      return ElementType::kFloat32;
    case DatasetFormat::kU8bin:
    case DatasetFormat::kBvecs:
      return ElementType::kUint8;
    case DatasetFormat::kI8bin:
      return ElementType::kInt8;
    default:
      return std::nullopt;
  }
}

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_ELEMENT_TRAITS_H_
