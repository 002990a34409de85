// Serialize / Deserialize of ProductQuantizer.
//
// Byte layout, version 1 (all integers and floats little-endian):
//   u32 magic      0x51505453 ("STPQ")
//   u32 version    1
//   u32 d
//   u32 m
//   u32 centroids  256 (codes are 8-bit)
//   u32 flags      bit 0: centred (mean present); bit 1: OPQ rotation
//                  present; other bits 0
//   u32 offsets[m + 1]          subspace boundaries, 0 .. d
//   f32 mean[d]                 only when centred
//   f32 rotation[d * d]         only with OPQ: R row-major (x -> (x - mean) R)
//   f32 codebook[256 * d]       per subspace j: 256 x dsub_j row-major
//   u64 checksum               XXH3-64 (Checksum64, seed 0) of all bytes above
#include <bit>
#include <cstring>
#include <string>

#include "base/checksum.h"
#include "quant/pq/product_quantizer.h"

namespace strata::quant {
namespace {

static_assert(std::endian::native == std::endian::little,
              "PQ serialization writes host-order values; big-endian hosts need byte swaps");

constexpr std::uint32_t kMagic = 0x51505453;
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kFlagCentred = 1;
constexpr std::uint32_t kFlagRotation = 2;
constexpr std::size_t kHeaderWords = 6;

template <typename T>
void Put(std::vector<std::uint8_t>* out, const T* values, std::size_t count) {
  if (count == 0) return;
  const std::size_t at = out->size();
  out->resize(at + count * sizeof(T));
  std::memcpy(out->data() + at, values, count * sizeof(T));
}

}  // namespace

std::vector<std::uint8_t> ProductQuantizer::Serialize() const {
  std::vector<std::uint8_t> out;
  const std::uint32_t header[kHeaderWords] = {kMagic,
                                              kVersion,
                                              static_cast<std::uint32_t>(d_),
                                              static_cast<std::uint32_t>(m_),
                                              static_cast<std::uint32_t>(kCentroids),
                                              (mean_.empty() ? 0u : kFlagCentred) |
                                                  (rotation_.empty() ? 0u : kFlagRotation)};
  out.reserve(sizeof(header) + offsets_.size() * 4 +
              (mean_.size() + rotation_.size() + centroids_.size()) * 4 + 8);
  Put(&out, header, kHeaderWords);
  Put(&out, offsets_.data(), offsets_.size());
  Put(&out, mean_.data(), mean_.size());
  Put(&out, rotation_.data(), rotation_.size());
  Put(&out, centroids_.data(), centroids_.size());
  const std::uint64_t sum = Checksum64(out.data(), out.size());
  Put(&out, &sum, 1);
  return out;
}

Result<ProductQuantizer> ProductQuantizer::Deserialize(std::span<const std::uint8_t> bytes) {
  constexpr std::size_t kHeaderBytes = kHeaderWords * 4;
  if (bytes.size() < kHeaderBytes + 8) {
    return Status::Corruption("PQ codebook: " + std::to_string(bytes.size()) +
                              " bytes is shorter than the header");
  }
  std::uint32_t h[kHeaderWords];
  std::memcpy(h, bytes.data(), kHeaderBytes);
  if (h[0] != kMagic) return Status::Corruption("PQ codebook: bad magic");
  if (h[1] != kVersion) {
    return Status::NotSupported("PQ codebook: unknown version " + std::to_string(h[1]));
  }
  const std::size_t d = h[2], m = h[3];
  const bool centred = (h[5] & kFlagCentred) != 0;
  const bool rotated = (h[5] & kFlagRotation) != 0;
  if (h[4] != kCentroids || (h[5] & ~(kFlagCentred | kFlagRotation)) != 0 || d == 0 || m == 0 ||
      m > d || d > (1u << 20)) {
    return Status::Corruption("PQ codebook: bad header fields");
  }
  const std::size_t expect = kHeaderBytes + (m + 1) * 4 + (centred ? d * 4 : 0) +
                             (rotated ? d * d * 4 : 0) + kCentroids * d * 4 + 8;
  if (bytes.size() != expect) {
    return Status::Corruption("PQ codebook: size " + std::to_string(bytes.size()) +
                              " does not match the header (expected " + std::to_string(expect) +
                              ")");
  }
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + expect - 8, 8);
  if (Checksum64(bytes.data(), expect - 8) != stored) {
    return Status::Corruption("PQ codebook: checksum mismatch");
  }
  const std::uint8_t* p = bytes.data() + kHeaderBytes;
  std::vector<std::uint32_t> offsets(m + 1);
  std::memcpy(offsets.data(), p, offsets.size() * 4);
  p += offsets.size() * 4;
  std::vector<float> mean(centred ? d : 0);
  if (!mean.empty()) std::memcpy(mean.data(), p, mean.size() * 4);
  p += mean.size() * 4;
  std::vector<float> rotation(rotated ? d * d : 0);
  if (!rotation.empty()) std::memcpy(rotation.data(), p, rotation.size() * 4);
  p += rotation.size() * 4;
  std::vector<float> centroids(kCentroids * d);
  std::memcpy(centroids.data(), p, centroids.size() * 4);
  Result<ProductQuantizer> pq =
      FromParts(d, std::move(offsets), std::move(mean), std::move(centroids), std::move(rotation));
  if (!pq.ok()) return Status::Corruption("PQ codebook: " + pq.status().message());
  return pq;
}

}  // namespace strata::quant
