#include "format/ivf_ram_file.h"

#include <cstring>
#include <span>
#include <string>

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
                        Bytes(parts.cluster_sizes), Bytes(parts.ids), Bytes(parts.ram_blocks),
                        Bytes(parts.listed_codes)});
}

Result<IvfRamParts> ReadIvfRamFile(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(BlobContents blob,
                          ReadBlobFile(path, kIvfRamBlobKind, kIvfRamVersion, 0));
  // Version 1 had no listed codes.
  const std::size_t sections = blob.version == 1 ? 6 : 7;
  if (blob.sections.size() != sections) {
    return Status::Corruption(path + ": " + std::to_string(blob.sections.size()) +
                              " sections, expected " + std::to_string(sections));
  }
  IvfRamParts p;
  p.quantizer = std::move(blob.sections[0]);
  p.coarse = std::move(blob.sections[1]);
  if (!FromBytes(blob.sections[2], &p.centroids) ||
      !FromBytes(blob.sections[3], &p.cluster_sizes) || !FromBytes(blob.sections[4], &p.ids)) {
    return Status::Corruption(path + ": section size is not a whole number of elements");
  }
  p.ram_blocks = std::move(blob.sections[5]);
  if (sections == 7) p.listed_codes = std::move(blob.sections[6]);
  return p;
}

}  // namespace strata::format
