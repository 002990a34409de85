#include "quant/rabitq/fastscan.h"

#include <gtest/gtest.h>

#include <vector>

#include "quant/rabitq/layout.h"
#include "base/random.h"

namespace strata::quant::rabitq {
namespace {

struct Batch {
  RabitqLayout layout;
  std::vector<RabitqCode> codes;    // 32 canonical codes
  std::vector<std::uint8_t> block;  // packed
};

Batch RandomBatch(Xoshiro256& rng, std::size_t prefix_dim, bool all_ones = false) {
  Batch b;
  b.layout = {.padded_dim = prefix_dim, .prefix_dim = prefix_dim, .ex_bits = 0};
  b.codes.resize(kBatchSize);
  std::vector<const RabitqCode*> pointers;
  for (auto& c : b.codes) {
    c.bits.resize(b.layout.code_bytes());
    for (auto& byte : c.bits) byte = all_ones ? 0xFF : static_cast<std::uint8_t>(rng.Next());
    pointers.push_back(&c);
  }
  b.block.resize(b.layout.ram_batch_bytes());
  PackRamBatch(b.layout, pointers, b.block.data());
  return b;
}

// sum_t lut[16 t + nibble_t] straight from the canonical code (no layout).
std::uint32_t DirectSum(const RabitqCode& code, const std::vector<std::uint8_t>& lut,
                        std::size_t tables) {
  std::uint32_t sum = 0;
  for (std::size_t t = 0; t < tables; ++t) {
    const std::uint8_t byte = code.bits[t / 2];
    const unsigned nibble = t % 2 == 0 ? byte >> 4 : byte & 0x0F;
    sum += lut[16 * t + nibble];
  }
  return sum;
}

std::vector<kernels::Isa> AvailableIsas() {
  std::vector<kernels::Isa> isas;
  for (auto isa : {kernels::Isa::kScalar, kernels::Isa::kAvx2, kernels::Isa::kAvx512}) {
    if (GetFastScanKernels(isa) != nullptr) isas.push_back(isa);
  }
  return isas;
}

TEST(FastScan, ScalarMatchesDirectSum) {
  Xoshiro256 rng(1);
  for (std::size_t dm : {64, 128, 768, 1536}) {
    const Batch b = RandomBatch(rng, dm);
    const std::size_t tables = dm / 4;
    std::vector<std::uint8_t> lut(tables * 16);
    for (auto& v : lut) v = static_cast<std::uint8_t>(rng.Next());
    std::uint32_t acc[32];
    FastScanAccumulateScalar(b.block.data(), lut.data(), tables, acc);
    for (std::size_t s = 0; s < 32; ++s) {
      EXPECT_EQ(acc[s], DirectSum(b.codes[s], lut, tables)) << "dm " << dm << " slot " << s;
    }
  }
}

TEST(FastScan, EveryIsaMatchesScalarExactly) {
  Xoshiro256 rng(2);
  const auto isas = AvailableIsas();
  ASSERT_FALSE(isas.empty());
  for (kernels::Isa isa : isas) {
    const FastScanKernels* k = GetFastScanKernels(isa);
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->isa, isa);
    // 8192 dims = 2048 tables: several 16-bit segments in every kernel.
    for (std::size_t dm : {64, 128, 192, 768, 1024, 1536, 8192}) {
      for (int mode = 0; mode < 3; ++mode) {
        // mode 0 random, 1 all-255 entries with all-ones codes (largest
        // possible sums: catches 16-bit overflow), 2 sparse entries.
        const Batch b = RandomBatch(rng, dm, mode == 1);
        const std::size_t tables = dm / 4;
        std::vector<std::uint8_t> lut(tables * 16);
        for (auto& v : lut) {
          v = mode == 1   ? 255
              : mode == 2 ? ((rng.Next() & 7) == 0 ? 255 : 0)
                          : static_cast<std::uint8_t>(rng.Next());
        }
        std::uint32_t expected[32], got[32];
        FastScanAccumulateScalar(b.block.data(), lut.data(), tables, expected);
        k->accumulate(b.block.data(), lut.data(), tables, got);
        for (int s = 0; s < 32; ++s) {
          ASSERT_EQ(got[s], expected[s])
              << kernels::IsaName(isa) << " dm " << dm << " mode " << mode << " slot " << s;
        }
        if (mode == 1) {
          EXPECT_EQ(expected[0], 255u * tables);
        }
      }
    }
  }
}

TEST(FastScan, BestKernelsIsUsable) {
  const FastScanKernels& best = BestFastScanKernels();
  EXPECT_NE(best.accumulate, nullptr);
  EXPECT_LE(static_cast<int>(best.isa), static_cast<int>(kernels::DetectIsa()));
  EXPECT_EQ(GetFastScanKernels(best.isa), &best);
}

TEST(FastScan, FloatLutEntriesAreSubsetSums) {
  const float q[8] = {1.0f, 2.0f, 4.0f, 8.0f, -1.0f, 0.5f, 0.25f, 3.0f};
  std::vector<float> lut(2 * 16);
  BuildFloatLut(q, 2, lut.data());
  EXPECT_EQ(lut[0], 0.0f);
  EXPECT_EQ(lut[8], 1.0f);  // bit 3 <-> first coordinate
  EXPECT_EQ(lut[1], 8.0f);  // bit 0 <-> fourth coordinate
  EXPECT_EQ(lut[15], 15.0f);
  EXPECT_EQ(lut[16 + 0b1001], 2.0f);  // -1 + 3
  EXPECT_EQ(lut[16 + 0b0110], 0.75f);
}

TEST(FastScan, QuantizedLutErrorWithinHalfStepPerTable) {
  Xoshiro256 rng(3);
  for (std::size_t dm : {64, 768}) {
    const std::size_t tables = dm / 4;
    std::vector<float> q(dm);
    for (auto& v : q) v = static_cast<float>(rng.Normal() + 0.3);  // uncentred
    std::vector<float> flut(tables * 16);
    std::vector<std::uint8_t> lut(tables * 16);
    BuildFloatLut(q.data(), tables, flut.data());
    const LutScale scale = QuantizeLut(flut.data(), tables, lut.data());
    const Batch b = RandomBatch(rng, dm);
    std::uint32_t acc[32];
    FastScanAccumulateScalar(b.block.data(), lut.data(), tables, acc);
    for (int s = 0; s < 32; ++s) {
      double exact = 0.0;
      for (std::size_t i = 0; i < dm; ++i) {
        if ((b.codes[s].bits[i / 8] >> (7 - i % 8)) & 1) exact += q[i];
      }
      const double approx = scale.delta * static_cast<double>(acc[s]) + scale.offset;
      EXPECT_LE(std::fabs(approx - exact), 0.5 * scale.delta * tables + 1e-4 * dm) << s;
    }
  }
}

TEST(FastScan, ZeroQueryGivesZeroTables) {
  std::vector<float> flut(16 * 16, 0.0f);
  std::vector<std::uint8_t> lut(16 * 16, 7);
  const LutScale scale = QuantizeLut(flut.data(), 16, lut.data());
  EXPECT_EQ(scale.delta, 1.0f);
  EXPECT_EQ(scale.offset, 0.0f);
  for (auto v : lut) EXPECT_EQ(v, 0);
}

}  // namespace
}  // namespace strata::quant::rabitq
