#include "index/build_util.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "kernels/distance.h"

namespace strata {

Status MakeIndexDirectory(const std::string& dir) {
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return Status::FromErrno("mkdir " + dir, errno);
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(dir + " exists and is not a directory");
  }
  return Status::OK();
}

Status NormalizeRowsForCosine(float* rows, std::uint64_t n, std::uint32_t dim,
                              const std::string& path) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!kernels::NormalizeInPlace(rows + i * dim, dim)) {
      return Status::InvalidArgument(path + ": row " + std::to_string(i) +
                                     " is a zero vector, which has no cosine distance");
    }
  }
  return Status::OK();
}

void StoreVector(ElementType type, const float* row, std::size_t dim, std::byte* out) {
  switch (type) {
    case ElementType::kFloat32:
      std::memcpy(out, row, dim * sizeof(float));
      break;
    case ElementType::kFloat16:
      kernels::FloatToHalfN(row, reinterpret_cast<std::uint16_t*>(out), dim);
      break;
    case ElementType::kBFloat16:
      kernels::FloatToBFloat16N(row, reinterpret_cast<std::uint16_t*>(out), dim);
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < dim; ++i) {
        reinterpret_cast<std::uint8_t*>(out)[i] = static_cast<std::uint8_t>(std::lrint(row[i]));
      }
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < dim; ++i) {
        reinterpret_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(std::lrint(row[i]));
      }
      break;
  }
}

}  // namespace strata
