#include "index/build_util.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>

#include "kernels/distance.h"
#include "strata/dataset.h"

namespace strata {

Result<BuildRows> LoadBuildRows(const std::string& base_path, const std::string& what) {
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(base_path));
  BuildRows out;
  out.type = reader->element_type();
  out.dim = reader->dim();
  out.n = reader->rows();
  if (out.n == 0) return Status::InvalidArgument(base_path + ": no vectors");
  if (out.n >= 0xFFFFFFFFull) {
    return Status::NotSupported(what + ": more than 2^32 - 2 vectors in one shard");
  }
  STRATA_ASSIGN_OR_RETURN(out.matrix, reader->ReadAllAsFloat());
  return out;
}

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
