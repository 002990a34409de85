// Little-endian fixed-width encoding of integers into byte buffers (on-disk
// layouts are little-endian regardless of the host; leveldb's coding.h idea).
#ifndef STRATA_FORMAT_LE_CODING_H_
#define STRATA_FORMAT_LE_CODING_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace strata::format {

// x86-64 and AArch64 Linux are little-endian; a big-endian port would byte-swap here.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "Strata formats assume little-endian");

inline void PutU32(std::byte* p, std::uint32_t v) { std::memcpy(p, &v, 4); }
inline void PutU64(std::byte* p, std::uint64_t v) { std::memcpy(p, &v, 8); }
inline std::uint32_t GetU32(const std::byte* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint64_t GetU64(const std::byte* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
// Ids of `width` bytes (4, 5 or 8): the low `width` bytes of v.
inline void PutId(std::byte* p, std::uint64_t v, unsigned width) { std::memcpy(p, &v, width); }
inline std::uint64_t GetId(const std::byte* p, unsigned width) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, width);
  return v;
}

}  // namespace strata::format

#endif  // STRATA_FORMAT_LE_CODING_H_
