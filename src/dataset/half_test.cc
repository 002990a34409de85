// float16 conversion: exhaustive against a double-precision reference.
#include "dataset/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>

namespace strata::dataset_internal {
namespace {

// Reference value of a half bit pattern computed from its fields in double.
double HalfReference(std::uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int exp = (h >> 10) & 0x1f;
  const int mant = h & 0x3ff;
  if (exp == 0) return sign * std::ldexp(mant, -24);
  if (exp == 31) return mant ? std::nan("") : sign * INFINITY;
  return sign * std::ldexp(1024 + mant, exp - 25);
}

TEST(Half, WideningIsExactForAllPatterns) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const double ref = HalfReference(bits);
    const float got = HalfToFloat(bits);
    if (std::isnan(ref)) {
      ASSERT_TRUE(std::isnan(got)) << h;
      ASSERT_TRUE(HalfIsNonFinite(bits));
    } else {
      ASSERT_EQ(static_cast<double>(got), ref) << h;
      ASSERT_EQ(std::signbit(got), (h >> 15) != 0) << h;
      ASSERT_EQ(HalfIsNonFinite(bits), std::isinf(ref)) << h;
    }
  }
}

TEST(Half, NarrowingRoundTripsAndRoundsToNearestEven) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if (std::isnan(HalfReference(bits))) {
      ASSERT_TRUE(std::isnan(HalfToFloat(FloatToHalf(HalfToFloat(bits)))));
      continue;
    }
    ASSERT_EQ(FloatToHalf(HalfToFloat(bits)), bits) << h;
  }
  // Midpoints between consecutive positive finite halves round to the even
  // one; points just off a midpoint round to the nearer one.
  for (std::uint32_t h = 0; h < 0x7bff; ++h) {
    const double lo = HalfReference(static_cast<std::uint16_t>(h));
    const double hi = HalfReference(static_cast<std::uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2);  // exact in float
    const std::uint16_t even = (h % 2 == 0) ? h : h + 1;
    ASSERT_EQ(FloatToHalf(mid), even) << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(FloatToHalf(std::nextafter(mid, INFINITY)), h + 1) << h;
    ASSERT_EQ(FloatToHalf(-mid), static_cast<std::uint16_t>(even | 0x8000)) << h;
  }
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65519.0f), 0x7bff);  // below the midpoint to "65536"
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // rounds up to +Inf
  EXPECT_EQ(FloatToHalf(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalf(-INFINITY), 0xfc00);
  EXPECT_EQ(FloatToHalf(1e-10f), 0x0000);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_TRUE(HalfIsNonFinite(FloatToHalf(std::nanf(""))));
  EXPECT_NE(FloatToHalf(std::nanf("")) & 0x3ff, 0);
}

}  // namespace
}  // namespace strata::dataset_internal
