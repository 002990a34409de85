// Core vocabulary types shared by every Strata API: metrics, element types, ids.
#ifndef STRATA_TYPES_H_
#define STRATA_TYPES_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "strata/result.h"

namespace strata {

// Vector ids are 64-bit everywhere in memory and on disk, so an index is never
// capped at 2^32 points. Exchange formats that store u32 ids (.ibin ground
// truth, results files) reject ids that do not fit with a clear error.
using VectorId = std::uint64_t;
// Marks an empty result slot (fewer than k neighbours found).
inline constexpr VectorId kInvalidVectorId = ~VectorId{0};

// Distance functions. Smaller is always nearer: inner product is returned
// negated (-<x,y>) and cosine as 1 - cos(x,y), so every index can rank by
// ascending distance.
enum class Metric : std::uint8_t {
  kL2 = 0,            // squared Euclidean distance
  kInnerProduct = 1,  // -<x, y>
  kCosine = 2,        // 1 - <x, y> / (|x| |y|)
};

// "l2", "ip" (also "mips", "inner_product") or "cosine"; case-sensitive.
Result<Metric> ParseMetric(std::string_view name);
std::string_view MetricName(Metric metric);

// Element type of stored vectors. Half types are stored as such and computed
// in float32.
enum class ElementType : std::uint8_t {
  kFloat32 = 0,
  kFloat16 = 1,
  kBFloat16 = 2,
  kUint8 = 3,
  kInt8 = 4,
};

// "float"/"float32"/"f32", "float16"/"f16", "bfloat16"/"bf16", "uint8"/"u8", "int8"/"i8".
Result<ElementType> ParseElementType(std::string_view name);
std::string_view ElementTypeName(ElementType type);
// Bytes per element: 4, 2, 2, 1, 1.
std::size_t ElementSize(ElementType type);

}  // namespace strata

#endif  // STRATA_TYPES_H_
