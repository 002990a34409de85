// Scalar FastScan reference, the query look-up tables and ISA dispatch.
#include "quant/rabitq/fastscan.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/rabitq/fastscan_isa.h"

namespace strata::quant::rabitq {
namespace {

// Slot stored in the low nibble of byte m of a 16-byte table group (the high
// nibble holds this slot + 16); see layout.h.
constexpr int SlotOfByte(int m) { return (m % 2 == 0) ? m / 2 : 8 + m / 2; }

constexpr FastScanKernels kScalarKernels{kernels::Isa::kScalar, &FastScanAccumulateScalar};
#if defined(__x86_64__)
constexpr FastScanKernels kAvx2Kernels{kernels::Isa::kAvx2, &FastScanAccumulateAvx2};
constexpr FastScanKernels kAvx512Kernels{kernels::Isa::kAvx512, &FastScanAccumulateAvx512};
#endif

}  // namespace

void FastScanAccumulateScalar(const std::uint8_t* codes, const std::uint8_t* lut,
                              std::size_t num_tables, std::uint32_t* out) {
  std::uint32_t acc[32] = {};
  // Walk the block in storage order: each byte carries one table's nibbles
  // for two slots.
  for (std::size_t t = 0; t < num_tables; ++t) {
    const std::uint8_t* group = codes + 16 * t;  // table t's 16 bytes
    const std::uint8_t* table = lut + 16 * t;
    for (int m = 0; m < 16; ++m) {
      const int slot = SlotOfByte(m);
      acc[slot] += table[group[m] & 0x0F];
      acc[slot + 16] += table[group[m] >> 4];
    }
  }
  std::memcpy(out, acc, sizeof(acc));
}

void BuildFloatLut(const float* q, std::size_t num_tables, float* lut) {
  for (std::size_t t = 0; t < num_tables; ++t) {
    const float a = q[4 * t], b = q[4 * t + 1], c = q[4 * t + 2], d = q[4 * t + 3];
    float* table = lut + 16 * t;
    // Each entry extends a smaller one by one coordinate (11 adds per table
    // instead of 32); the order is fixed, so tables are reproducible.
    table[0] = 0.0f;
    table[1] = d;
    table[2] = c;
    table[3] = c + d;
    for (int v = 0; v < 4; ++v) table[4 + v] = b + table[v];
    for (int v = 0; v < 8; ++v) table[8 + v] = a + table[v];
  }
}

LutScale QuantizeLut(const float* float_lut, std::size_t num_tables, std::uint8_t* lut) {
  float max_range = 0.0f;
  double offset = 0.0;
  for (std::size_t t = 0; t < num_tables; ++t) {
    const float* table = float_lut + 16 * t;
    const auto [lo, hi] = std::minmax_element(table, table + 16);
    max_range = std::max(max_range, *hi - *lo);
    offset += *lo;
  }
  LutScale scale;
  scale.delta = max_range > 0.0f ? max_range / 255.0f : 1.0f;
  scale.offset = static_cast<float>(offset);
  const float inv = 1.0f / scale.delta;
  for (std::size_t t = 0; t < num_tables; ++t) {
    const float* table = float_lut + 16 * t;
    const float lo = *std::min_element(table, table + 16);
    for (int v = 0; v < 16; ++v) {
      // x >= 0, so truncating x + 1/2 rounds to nearest (an inline
      // conversion; nearbyint is a libm call without SSE4.1).
      const float x = (table[v] - lo) * inv + 0.5f;
      lut[16 * t + v] = static_cast<std::uint8_t>(std::min(static_cast<int>(x), 255));
    }
  }
  return scale;
}

const FastScanKernels* GetFastScanKernels(kernels::Isa isa) {
  switch (isa) {
    case kernels::Isa::kScalar:
      return &kScalarKernels;
#if defined(__x86_64__)
    // The distance kernels are compiled with the same per-ISA flags, so their
    // availability check (CPUID and OS state) is exactly the one needed here.
    case kernels::Isa::kAvx2:
      return kernels::GetKernels(isa) != nullptr ? &kAvx2Kernels : nullptr;
    case kernels::Isa::kAvx512:
      return kernels::GetKernels(isa) != nullptr ? &kAvx512Kernels : nullptr;
#endif
    default:
      return nullptr;
  }
}

const FastScanKernels& BestFastScanKernels() {
  static const FastScanKernels* const best = [] {
    for (int i = static_cast<int>(kernels::DetectIsa()); i > 0; --i) {
      if (const FastScanKernels* k = GetFastScanKernels(static_cast<kernels::Isa>(i))) return k;
    }
    return &kScalarKernels;
  }();
  return *best;
}

}  // namespace strata::quant::rabitq
