#include "quant/rabitq/ex_code.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/random.h"

namespace strata::quant::rabitq {
namespace {

// |g| / ||g|| for a standard Gaussian g: the a of a randomly rotated residual.
std::vector<float> RandomAbsUnit(Xoshiro256& rng, std::size_t n) {
  std::vector<float> a(n);
  double norm = 0.0;
  for (float& v : a) {
    v = static_cast<float>(rng.Normal());
    norm += static_cast<double>(v) * v;
  }
  for (float& v : a) v = static_cast<float>(std::fabs(v) / std::sqrt(norm));
  return a;
}

TEST(ExCode, PackUnpackRoundTrip) {
  Xoshiro256 rng(1);
  for (int ex = 1; ex <= kMaxExBits; ++ex) {
    const std::size_t n = 128;
    std::vector<std::uint8_t> values(n), back(n), packed(n * ex / 8);
    for (auto& v : values) v = static_cast<std::uint8_t>(rng.Next() & ((1u << ex) - 1));
    PackExCode(values.data(), n, ex, packed.data());
    UnpackExCode(packed.data(), n, ex, back.data());
    EXPECT_EQ(values, back) << "ex " << ex;
  }
}

TEST(ExCode, PackedLayoutIsLittleEndianBitFields) {
  // ex = 3: coordinate j of a group holds bits [3j, 3j + 3) of the 24-bit
  // little-endian integer formed by the group's 3 bytes.
  const std::uint8_t values[8] = {1, 2, 3, 4, 5, 6, 7, 0};
  std::uint32_t w = 0;
  for (int j = 0; j < 8; ++j) w |= static_cast<std::uint32_t>(values[j]) << (3 * j);
  std::uint8_t packed[3];
  PackExCode(values, 8, 3, packed);
  EXPECT_EQ(packed[0], w & 0xFF);
  EXPECT_EQ(packed[1], (w >> 8) & 0xFF);
  EXPECT_EQ(packed[2], (w >> 16) & 0xFF);
  // ex = 8 is one byte per coordinate.
  std::uint8_t bytes[8];
  PackExCode(values, 8, 8, bytes);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(bytes[j], values[j]);
}

TEST(ExCode, DotMatchesNaiveSum) {
  Xoshiro256 rng(2);
  for (int ex = 1; ex <= kMaxExBits; ++ex) {
    const std::size_t n = 256;
    std::vector<std::uint8_t> values(n), packed(n * ex / 8);
    std::vector<float> q(n);
    double expected = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      values[i] = static_cast<std::uint8_t>(rng.Next() & ((1u << ex) - 1));
      q[i] = static_cast<float>(rng.Normal());
      expected += values[i] * static_cast<double>(q[i]);
    }
    PackExCode(values.data(), n, ex, packed.data());
    EXPECT_NEAR(ExCodeDot(packed.data(), q.data(), n, ex), expected, 1e-4 * (1 << ex) * 16)
        << "ex " << ex;
  }
}

TEST(ExCode, BestScaleBeatsAFineGrid) {
  // The sweep visits every t where the code changes, so no t on a grid may
  // give a better cosine than the one it returns.
  Xoshiro256 rng(3);
  for (int ex = 1; ex <= kMaxExBits; ++ex) {
    for (int trial = 0; trial < 3; ++trial) {
      const std::size_t n = 128;
      const auto a = RandomAbsUnit(rng, n);
      const double best_t = ExCodeBestScale(a.data(), n, ex);
      const double best = ExCodeObjective(a.data(), n, ex, best_t);
      float max_a = 0.0f;
      for (float v : a) max_a = std::max(max_a, v);
      const double t_end = ((1 << ex) - 1 + 10.0) / max_a;
      double grid_best = 0.0;
      for (int g = 1; g <= 4000; ++g) {
        grid_best = std::max(grid_best, ExCodeObjective(a.data(), n, ex, t_end * g / 4000.0));
      }
      EXPECT_GE(best, grid_best - 1e-9) << "ex " << ex;
    }
  }
}

TEST(ExCode, CosineGrowsWithBits) {
  Xoshiro256 rng(4);
  const std::size_t n = 256;
  const auto a = RandomAbsUnit(rng, n);
  double previous = 0.0;
  for (int ex = 1; ex <= kMaxExBits; ++ex) {
    const double cosine = ExCodeObjective(a.data(), n, ex, ExCodeBestScale(a.data(), n, ex));
    EXPECT_GT(cosine, previous) << "ex " << ex;
    previous = cosine;
  }
  // With 8 extra bits the grid vector is nearly parallel to a.
  EXPECT_GT(previous, 0.99999);
}

TEST(ExCode, FastScaleIsNearlyAsGoodAsExact) {
  Xoshiro256 rng(5);
  const std::size_t n = 256;
  for (int ex = 1; ex <= kMaxExBits; ++ex) {
    const double fraction = ExCodeFastFraction(n, ex, 17);
    EXPECT_GT(fraction, 0.0);
    EXPECT_LT(fraction, 1.0);
    double loss_ratio_sum = 0.0;
    constexpr int kTrials = 20;
    for (int trial = 0; trial < kTrials; ++trial) {
      const auto a = RandomAbsUnit(rng, n);
      const double exact = ExCodeObjective(a.data(), n, ex, ExCodeBestScale(a.data(), n, ex));
      const double fast =
          ExCodeObjective(a.data(), n, ex, fraction * ExCodeScaleEnd(a.data(), n, ex));
      EXPECT_LE(fast, exact + 1e-12);
      // The loss in 1 - cosine (the error that matters) stays small for every
      // vector, and is small on average.
      EXPECT_LT(1.0 - fast, 2.0 * (1.0 - exact)) << "ex " << ex;
      loss_ratio_sum += (1.0 - fast) / (1.0 - exact);
    }
    EXPECT_LT(loss_ratio_sum / kTrials, 1.3) << "ex " << ex;
  }
}

TEST(ExCode, QuantizeClampsAndHandlesZeros) {
  const float a[8] = {0.0f, 0.1f, 0.5f, 1.0f, 0.0f, 0.2f, 0.3f, 0.9f};
  std::uint8_t k[8];
  ExCodeQuantize(a, 8, 2, 10.0, k);  // kmax = 3
  const std::uint8_t expected[8] = {0, 1, 3, 3, 0, 2, 3, 3};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(k[i], expected[i]) << i;
  const float zeros[8] = {};
  EXPECT_EQ(ExCodeBestScale(zeros, 8, 4), 0.0);
}

}  // namespace
}  // namespace strata::quant::rabitq
