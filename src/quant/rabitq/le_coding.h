// Little-endian fixed-width load/store for the RaBitQ blobs and packed
// layouts. Every documented layout in this folder is little-endian; the
// project targets x86-64 (and would target little-endian AArch64), so these
// are plain unaligned memcpy's guarded by a static_assert rather than byte
// swaps that would never run.
#ifndef STRATA_QUANT_RABITQ_LE_CODING_H_
#define STRATA_QUANT_RABITQ_LE_CODING_H_

#include <bit>
#include <cstdint>
#include <cstring>

namespace strata::quant::rabitq {

static_assert(std::endian::native == std::endian::little,
              "RaBitQ layouts are little-endian; a big-endian port needs byte swaps here");

// Stores `value` at `dst` (any alignment).
template <typename T>
inline void StoreLE(std::uint8_t* dst, T value) {
  std::memcpy(dst, &value, sizeof(T));
}

// Loads a T from `src` (any alignment).
template <typename T>
inline T LoadLE(const std::uint8_t* src) {
  T value;
  std::memcpy(&value, src, sizeof(T));
  return value;
}

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_LE_CODING_H_
