// Steps every index build shares: loading the base rows, the index
// directory, cosine normalisation of loaded rows, and writing a float row
// back in its stored element type.
#ifndef STRATA_INDEX_BUILD_UTIL_H_
#define STRATA_INDEX_BUILD_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/dataset.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

// A base file's rows, widened to float32 for a build.
struct BuildRows {
  ElementType type = ElementType::kFloat32;  // as stored in the file
  std::uint32_t dim = 0;
  std::uint64_t n = 0;
  VectorMatrix matrix;  // n x dim float32
};

// Reads every row of `base_path` as float32. InvalidArgument for a file
// without rows; NotSupported for 2^32 - 1 rows or more (`what` names the
// index kind in the message); reader errors pass through.
Result<BuildRows> LoadBuildRows(const std::string& base_path, const std::string& what);

// Creates `dir` if missing. InvalidArgument if it exists and is not a
// directory; IOError from mkdir.
Status MakeIndexDirectory(const std::string& dir);

// Normalises each of the n rows (dim floats) to unit length in place, for
// cosine. InvalidArgument naming `path` and the row for a zero vector.
Status NormalizeRowsForCosine(float* rows, std::uint64_t n, std::uint32_t dim,
                              const std::string& path);

// Converts float row `row` back to the stored element type. Integer and half
// inputs were widened exactly on load, so this reproduces the input bytes.
void StoreVector(ElementType type, const float* row, std::size_t dim, std::byte* out);

// float32, float16 or bfloat16.
inline bool IsFloatType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16;
}

}  // namespace strata

#endif  // STRATA_INDEX_BUILD_UTIL_H_
