// Rotator dispatch by kind and the blob framing shared by both kinds; the
// kinds themselves live in rotator_dense.cc and rotator_fht.cc.
#include "quant/rabitq/rotator.h"

#include <string>

#include "base/checksum.h"
#include "quant/rabitq/le_coding.h"

namespace strata::quant::rabitq {
namespace {

constexpr std::size_t kHeaderBytes = 40;
constexpr std::size_t kTrailerBytes = 8;

}  // namespace

std::string_view RotatorKindName(RotatorKind kind) {
  switch (kind) {
    case RotatorKind::kDense:
      return "dense";
    case RotatorKind::kFhtKac:
      return "fht";
  }
  return "unknown";
}

Result<RotatorKind> ParseRotatorKind(std::string_view name) {
  if (name == "dense") return RotatorKind::kDense;
  if (name == "fht") return RotatorKind::kFhtKac;
  return Status::InvalidArgument("unknown rotator kind '" + std::string(name) +
                                 "' (expected dense or fht)");
}

Result<std::unique_ptr<Rotator>> Rotator::Create(RotatorKind kind, std::size_t dim,
                                                 std::uint64_t seed) {
  if (dim == 0 || dim > kMaxRotatorDim) {
    return Status::InvalidArgument("rotator dim " + std::to_string(dim) + " not in [1, " +
                                   std::to_string(kMaxRotatorDim) + "]");
  }
  switch (kind) {
    case RotatorKind::kDense:
      return CreateDenseRotator(dim, seed);
    case RotatorKind::kFhtKac:
      return CreateFhtRotator(dim, seed);
  }
  return Status::InvalidArgument("unknown rotator kind");
}

void Rotator::RotateBatch(const float* in, std::size_t n, float* out) const {
  for (std::size_t i = 0; i < n; ++i) Rotate(in + i * dim_, out + i * padded_dim_);
}

std::size_t Rotator::SerializedSize() const { return kHeaderBytes + BodySize() + kTrailerBytes; }

void Rotator::Serialize(std::vector<std::uint8_t>* out) const {
  const std::size_t body = BodySize();
  const std::size_t start = out->size();
  out->resize(start + kHeaderBytes + body + kTrailerBytes);
  std::uint8_t* p = out->data() + start;
  StoreLE<std::uint32_t>(p + 0, kRotatorMagic);
  StoreLE<std::uint16_t>(p + 4, kRotatorVersion);
  p[6] = static_cast<std::uint8_t>(kind_);
  p[7] = 0;
  StoreLE<std::uint64_t>(p + 8, dim_);
  StoreLE<std::uint64_t>(p + 16, padded_dim_);
  StoreLE<std::uint64_t>(p + 24, seed_);
  StoreLE<std::uint64_t>(p + 32, body);
  WriteBody(p + kHeaderBytes);
  StoreLE<std::uint64_t>(p + kHeaderBytes + body, Checksum64(p, kHeaderBytes + body));
}

Result<std::unique_ptr<Rotator>> Rotator::Deserialize(std::span<const std::uint8_t> blob) {
  if (blob.size() < kHeaderBytes + kTrailerBytes) {
    return Status::Corruption("rotator blob too short: " + std::to_string(blob.size()) + " bytes");
  }
  const std::uint8_t* p = blob.data();
  if (LoadLE<std::uint32_t>(p) != kRotatorMagic) {
    return Status::Corruption("rotator blob: bad magic");
  }
  const auto version = LoadLE<std::uint16_t>(p + 4);
  if (version != kRotatorVersion) {
    return Status::NotSupported("rotator blob version " + std::to_string(version) +
                                " (this build reads " + std::to_string(kRotatorVersion) + ")");
  }
  const std::uint64_t body = LoadLE<std::uint64_t>(p + 32);
  // Compare against the remaining size first so the sum below cannot wrap.
  if (body > blob.size() - kHeaderBytes - kTrailerBytes ||
      blob.size() != kHeaderBytes + body + kTrailerBytes) {
    return Status::Corruption("rotator blob: body size " + std::to_string(body) +
                              " does not match blob size " + std::to_string(blob.size()));
  }
  if (LoadLE<std::uint64_t>(p + kHeaderBytes + body) != Checksum64(p, kHeaderBytes + body)) {
    return Status::Corruption("rotator blob: checksum mismatch");
  }
  const std::uint64_t dim = LoadLE<std::uint64_t>(p + 8);
  const std::uint64_t padded = LoadLE<std::uint64_t>(p + 16);
  const std::uint64_t seed = LoadLE<std::uint64_t>(p + 24);
  if (dim == 0 || dim > kMaxRotatorDim || padded != PaddedDim(dim) || p[7] != 0) {
    return Status::Corruption("rotator blob: bad dimensions " + std::to_string(dim) + " / " +
                              std::to_string(padded));
  }
  const std::span<const std::uint8_t> body_span = blob.subspan(kHeaderBytes, body);
  switch (static_cast<RotatorKind>(p[6])) {
    case RotatorKind::kDense:
      return ReadDenseRotator(dim, seed, body_span);
    case RotatorKind::kFhtKac:
      return ReadFhtRotator(dim, seed, body_span);
  }
  return Status::NotSupported("rotator blob: unknown kind " + std::to_string(p[6]));
}

}  // namespace strata::quant::rabitq
