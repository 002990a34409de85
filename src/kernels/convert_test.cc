// float16 / bfloat16 conversions: exhaustive over all 2^16 patterns, round to
// nearest even at every tie, NaN / Inf / subnormals, against the F16C and
// AVX512-BF16 hardware conversions where this CPU has them, and the bulk
// (SIMD) forms against the scalar ones.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/distance.h"
#include "kernels/distance_isa.h"
#include "kernels/test_hw_convert.h"

namespace strata::kernels {
namespace {

std::uint32_t Bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float FromBits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The value of a binary16 pattern from its definition, in double.
double HalfValue(std::uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 0x1F;
  const int mant = h & 0x3FF;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * HUGE_VAL;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

bool IsHalfNan(std::uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }

TEST(HalfConversion, AllPatternsDecodeToTheirValue) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = HalfToFloat(static_cast<std::uint16_t>(h));
    if (IsHalfNan(static_cast<std::uint16_t>(h))) {
      ASSERT_TRUE(std::isnan(f)) << h;
      // Quiet bit set, payload kept, sign kept.
      EXPECT_EQ(Bits(f), ((h & 0x8000u) << 16) | 0x7FC00000u | ((h & 0x3FFu) << 13)) << h;
    } else {
      ASSERT_EQ(static_cast<double>(f), HalfValue(static_cast<std::uint16_t>(h))) << h;
      EXPECT_EQ(std::signbit(f), (h & 0x8000) != 0) << h;
    }
  }
}

TEST(HalfConversion, RoundTripsEveryNonNanPattern) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    if (IsHalfNan(static_cast<std::uint16_t>(h))) continue;
    ASSERT_EQ(FloatToHalf(HalfToFloat(static_cast<std::uint16_t>(h))), h) << h;
  }
}

// Exactly halfway between two neighbouring halves rounds to the even one; a
// float ulp either side rounds to the nearer one. Covers subnormals, the
// normal/subnormal boundary and overflow to Inf.
TEST(HalfConversion, RoundsToNearestEven) {
  for (std::uint32_t h = 0; h < 0x7C00; ++h) {  // positive finite halves
    const double lo = HalfValue(static_cast<std::uint16_t>(h));
    const double hi = h + 1 == 0x7C00 ? 65536.0 : HalfValue(static_cast<std::uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact in float
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    const std::uint16_t even =
        (h & 1) ? static_cast<std::uint16_t>(h + 1) : static_cast<std::uint16_t>(h);
    ASSERT_EQ(FloatToHalf(mid), even) << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, HUGE_VALF)), h + 1) << h;
    ASSERT_EQ(FloatToHalf(-mid), even | 0x8000) << h;
  }
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65519.996f), 0x7BFF);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7C00);
  EXPECT_EQ(FloatToHalf(1e30f), 0x7C00);
  EXPECT_EQ(FloatToHalf(-HUGE_VALF), 0xFC00);
  EXPECT_EQ(FloatToHalf(0x1p-25f), 0x0000);  // tie between 0 and the smallest subnormal
  EXPECT_EQ(FloatToHalf(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(FloatToHalf(1e-40f), 0x0000);  // float subnormal
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(std::numeric_limits<float>::quiet_NaN()) & 0x7E00, 0x7E00);
  EXPECT_EQ(FloatToHalf(FromBits(0x7F800001u)), 0x7E00);  // signalling NaN -> quiet
  EXPECT_EQ(FloatToHalf(FromBits(0xFFC02000u)), 0xFE01);  // payload top bits kept
}

// Float bit patterns to compare with hardware: a stride through all 2^32
// plus every half boundary neighbourhood.
std::vector<std::uint32_t> FloatSamples() {
  std::vector<std::uint32_t> v;
  for (std::uint64_t u = 0; u <= 0xFFFFFFFFull; u += 4099)
    v.push_back(static_cast<std::uint32_t>(u));
  for (std::uint32_t e = 0; e < 256; ++e) {
    for (std::uint32_t m : {0u, 1u, 0xFFFu, 0x1000u, 0x1001u, 0x2000u, 0x3000u, 0x7FFFFFu, 0x7FFFu,
                            0x8000u, 0x8001u, 0x18000u, 0x400000u}) {
      v.push_back((e << 23) | m);
      v.push_back(0x80000000u | (e << 23) | m);
    }
  }
  return v;
}

TEST(HalfConversion, MatchesF16cHardware) {
  if (HardwareIsa() < Isa::kAvx2) GTEST_SKIP() << "no F16C on this CPU";
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    ASSERT_EQ(Bits(HalfToFloat(static_cast<std::uint16_t>(h))),
              Bits(testing::HwHalfToFloat(static_cast<std::uint16_t>(h))))
        << h;
  }
  for (std::uint32_t u : FloatSamples()) {
    ASSERT_EQ(FloatToHalf(FromBits(u)), testing::HwFloatToHalf(FromBits(u))) << std::hex << u;
  }
}

TEST(BFloat16Conversion, AllPatternsAndRoundTrip) {
  for (std::uint32_t h = 0; h <= 0xFFFF; ++h) {
    const float f = BFloat16ToFloat(static_cast<std::uint16_t>(h));
    ASSERT_EQ(Bits(f), h << 16) << h;  // bfloat16 is the top half of a float
    const bool nan = (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0;
    // NaNs come back with the quiet bit set.
    ASSERT_EQ(FloatToBFloat16(f), nan ? (h | 0x40) : h) << h;
  }
}

TEST(BFloat16Conversion, RoundsToNearestEven) {
  for (std::uint32_t h = 0; h < 0x7F80; h += 3) {   // positive finite bfloat16
    const std::uint32_t mid = (h << 16) | 0x8000u;  // exactly halfway to h + 1
    const std::uint16_t even =
        (h & 1) ? static_cast<std::uint16_t>(h + 1) : static_cast<std::uint16_t>(h);
    ASSERT_EQ(FloatToBFloat16(FromBits(mid)), even) << h;
    ASSERT_EQ(FloatToBFloat16(FromBits(mid - 1)), h) << h;
    ASSERT_EQ(FloatToBFloat16(FromBits(mid + 1)), h + 1) << h;
    ASSERT_EQ(FloatToBFloat16(FromBits(mid | 0x80000000u)), even | 0x8000) << h;
  }
  EXPECT_EQ(FloatToBFloat16(std::numeric_limits<float>::max()), 0x7F80);  // rounds to Inf
  EXPECT_EQ(FloatToBFloat16(FromBits(0x00012345u)), 0x0001);              // subnormal kept
  EXPECT_EQ(FloatToBFloat16(FromBits(0x7F800001u)), 0x7FC0);              // sNaN -> qNaN
}

TEST(BFloat16Conversion, MatchesAvx512Bf16HardwareOnNormals) {
  if (HardwareIsa() < Isa::kAvx512) GTEST_SKIP() << "no AVX512-BF16 on this CPU";
  for (std::uint32_t u : FloatSamples()) {
    const std::uint32_t exp = (u >> 23) & 0xFF;
    if (exp == 0) continue;  // vcvtneps2bf16 flushes subnormals; we keep them
    ASSERT_EQ(FloatToBFloat16(FromBits(u)), testing::HwFloatToBFloat16(FromBits(u)))
        << std::hex << u;
  }
}

// Bulk forms over every tail length, with specials mixed in, equal the
// scalar definitions bit for bit (both the dispatched and the AVX2 path).
TEST(BulkConversion, MatchesScalarBitForBit) {
  std::mt19937 rng(9);
  std::vector<float> f(70);
  std::vector<std::uint16_t> h(70);
  const float specials[] = {
      0.0f,   -0.0f,    HUGE_VALF, -HUGE_VALF, FromBits(0x7F800001u), FromBits(0xFFC12345u),
      1e-40f, 65520.0f, 0x1p-25f,  3.0e38f};
  for (std::size_t n = 0; n <= 70; ++n) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t r = rng();
      f[i] = i % 7 == 3 ? specials[r % 10] : FromBits(r);
      h[i] = static_cast<std::uint16_t>(r >> 7);
    }
    std::vector<float> out_f(n + 1, -1.0f);
    std::vector<std::uint16_t> out_h(n + 1, 0xABCD);
    using BulkFromHalf = void (*)(const std::uint16_t*, float*, std::size_t);
    using BulkToHalf = void (*)(const float*, std::uint16_t*, std::size_t);
    std::vector<std::pair<BulkFromHalf, BulkToHalf>> half_impls = {{&HalfToFloatN, &FloatToHalfN}};
    std::vector<std::pair<BulkFromHalf, BulkToHalf>> bf16_impls = {
        {&BFloat16ToFloatN, &FloatToBFloat16N}};
#if defined(STRATA_KERNELS_HAVE_X86)
    if (HardwareIsa() >= Isa::kAvx2) {
      half_impls.emplace_back(&Avx2HalfToFloatN, &Avx2FloatToHalfN);
      bf16_impls.emplace_back(&Avx2BFloat16ToFloatN, &Avx2FloatToBFloat16N);
    }
#endif
    for (const auto& [from, to] : half_impls) {
      from(h.data(), out_f.data(), n);
      to(f.data(), out_h.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(Bits(out_f[i]), Bits(HalfToFloat(h[i]))) << n << " " << i;
        ASSERT_EQ(out_h[i], FloatToHalf(f[i])) << n << " " << i << " " << std::hex << Bits(f[i]);
      }
      EXPECT_EQ(out_f[n], -1.0f);  // nothing written past n
      EXPECT_EQ(out_h[n], 0xABCD);
    }
    for (const auto& [from, to] : bf16_impls) {
      from(h.data(), out_f.data(), n);
      to(f.data(), out_h.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(Bits(out_f[i]), Bits(BFloat16ToFloat(h[i]))) << n << " " << i;
        ASSERT_EQ(out_h[i], FloatToBFloat16(f[i]))
            << n << " " << i << " " << std::hex << Bits(f[i]);
      }
      EXPECT_EQ(out_h[n], 0xABCD);
    }
  }
}

}  // namespace
}  // namespace strata::kernels
