#include "format/ivf_ram_file.h"

#include <cstring>
#include <span>

namespace strata::format {
namespace {

template <typename T>
std::span<const std::uint8_t> Bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)};
}

template <typename T>
bool FromBytes(const std::vector<std::uint8_t>& in, std::vector<T>* out) {
  if (in.size() % sizeof(T) != 0) return false;
  out->resize(in.size() / sizeof(T));
  if (!in.empty()) std::memcpy(out->data(), in.data(), in.size());
  return true;
}

}  // namespace

Result<std::uint64_t> WriteIvfRamFile(const std::string& path, const IvfRamParts& parts) {
  return WriteBlobFile(path, kIvfRamBlobKind, kIvfRamVersion,
                       {Bytes(parts.quantizer), Bytes(parts.coarse), Bytes(parts.centroids),
                        Bytes(parts.cluster_sizes), Bytes(parts.ids), Bytes(parts.ram_blocks)});
}

Result<IvfRamParts> ReadIvfRamFile(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(BlobContents blob,
                          ReadBlobFile(path, kIvfRamBlobKind, kIvfRamVersion, 6));
  IvfRamParts p;
  p.quantizer = std::move(blob.sections[0]);
  p.coarse = std::move(blob.sections[1]);
  if (!FromBytes(blob.sections[2], &p.centroids) ||
      !FromBytes(blob.sections[3], &p.cluster_sizes) || !FromBytes(blob.sections[4], &p.ids)) {
    return Status::Corruption(path + ": section size is not a whole number of elements");
  }
  p.ram_blocks = std::move(blob.sections[5]);
  return p;
}

}  // namespace strata::format
