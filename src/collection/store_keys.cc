#include "collection/store_keys.h"

#include <cstring>

namespace strata::collection {

std::string MetaKey(std::string_view name) {
  std::string key(1, kMetaPrefix);
  key.append(name);
  return key;
}

std::string IdKey(char prefix, VectorId id) {
  std::string key(9, '\0');
  key[0] = prefix;
  for (int i = 0; i < 8; ++i) key[1 + i] = static_cast<char>((id >> (56 - 8 * i)) & 0xff);
  return key;
}

Result<VectorId> ParseIdKey(std::string_view key, char prefix) {
  if (key.size() != 9 || key[0] != prefix) {
    return Status::Corruption("collection store: bad key of size " + std::to_string(key.size()));
  }
  VectorId id = 0;
  for (int i = 0; i < 8; ++i) id = (id << 8) | static_cast<std::uint8_t>(key[1 + i]);
  return id;
}

std::string EncodeU64(std::uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

Result<std::uint64_t> DecodeU64(std::string_view value) {
  if (value.size() != 8) {
    return Status::Corruption("collection store: expected an 8-byte value, got " +
                              std::to_string(value.size()));
  }
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(value[i]);
  return v;
}

// Record layout: [u8 version][u64 seq LE][u32 payload bytes LE][vector][payload].
namespace {
constexpr std::size_t kRecordHeader = 1 + 8 + 4;
}

std::string EncodeRecord(std::uint64_t seq, std::span<const std::byte> vector,
                         std::string_view payload) {
  std::string out;
  out.reserve(kRecordHeader + vector.size() + payload.size());
  out.push_back(static_cast<char>(kRecordFormatVersion));
  out.append(EncodeU64(seq));
  const auto n = static_cast<std::uint32_t>(payload.size());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  out.append(reinterpret_cast<const char*>(vector.data()), vector.size());
  out.append(payload);
  return out;
}

Result<RecordView> DecodeRecord(std::string_view value, std::size_t vector_bytes) {
  if (value.size() < kRecordHeader) {
    return Status::Corruption("collection store: record of " + std::to_string(value.size()) +
                              " bytes is truncated");
  }
  if (static_cast<std::uint8_t>(value[0]) != kRecordFormatVersion) {
    return Status::NotSupported("collection store: record format version " +
                                std::to_string(static_cast<std::uint8_t>(value[0])));
  }
  RecordView r;
  STRATA_ASSIGN_OR_RETURN(r.seq, DecodeU64(value.substr(1, 8)));
  std::uint32_t n = 0;
  for (int i = 3; i >= 0; --i) n = (n << 8) | static_cast<std::uint8_t>(value[9 + i]);
  if (value.size() != kRecordHeader + vector_bytes + n) {
    return Status::Corruption("collection store: record of " + std::to_string(value.size()) +
                              " bytes, expected " +
                              std::to_string(kRecordHeader + vector_bytes + n));
  }
  r.vector = value.substr(kRecordHeader, vector_bytes);
  r.payload = value.substr(kRecordHeader + vector_bytes, n);
  return r;
}

}  // namespace strata::collection
