#include "dataset/half.h"

#include <bit>

namespace strata::dataset_internal {

float HalfToFloat(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    const float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

std::uint16_t FloatToHalf(float value) {
  // F. Giesen's float_to_half_fast3_rtne: integer rounding for normals, a float
  // add that lets the FPU round subnormals, explicit handling of Inf/NaN.
  std::uint32_t f = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = f & 0x80000000u;
  f ^= sign;
  std::uint32_t o;
  if (f >= 0x47800000u) {  // |value| >= 65536, Inf or NaN
    o = f > 0x7f800000u ? 0x7e00u : 0x7c00u;
  } else if (f < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    const float denorm_magic = std::bit_cast<float>(0x3f000000u);  // 0.5f
    const float sum = std::bit_cast<float>(f) + denorm_magic;
    o = std::bit_cast<std::uint32_t>(sum) - 0x3f000000u;
  } else {
    const std::uint32_t mant_odd = (f >> 13) & 1u;
    f += 0xc8000fffu;  // rebias exponent (15 - 127) << 23, plus rounding bias 0xfff
    f += mant_odd;     // ties to even
    o = f >> 13;
  }
  return static_cast<std::uint16_t>(o | (sign >> 16));
}

}  // namespace strata::dataset_internal
