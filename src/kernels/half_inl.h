// Scalar float16 / bfloat16 <-> float32 bit conversions shared by the kernel
// translation units (scalar, AVX2, AVX-512 and convert.cc).
//
// Everything here has internal linkage on purpose (unnamed namespace in a
// header): this file is compiled into translation units built with different
// ISA flags, and an ordinary `inline` function would be emitted once per TU
// and merged by the linker, which may keep the AVX-512-encoded copy and run it
// on a CPU without AVX-512. The same holds for std:: inline helpers, so these
// use compiler builtins only.
#ifndef STRATA_KERNELS_HALF_INL_H_
#define STRATA_KERNELS_HALF_INL_H_

#include <cstdint>

namespace strata::kernels {
namespace {  // NOLINT(cert-dcl59-cpp,google-build-namespaces): see file comment

inline float BitsToFloat(std::uint32_t bits) { return __builtin_bit_cast(float, bits); }
inline std::uint32_t FloatToBits(float f) { return __builtin_bit_cast(std::uint32_t, f); }

// IEEE binary16 -> binary32, exact (every half is a float). NaNs get the quiet
// bit and keep their payload, matching F16C's VCVTPH2PS. Branch-free (all
// three cases are computed and selected) so that a loop over it vectorises.
inline float HalfBitsToFloat(std::uint16_t h) {
  constexpr std::uint32_t kShiftedExp = 0x7C00u << 13;  // half exponent field, in float position
  const std::uint32_t o = static_cast<std::uint32_t>(h & 0x7FFFu) << 13;  // exponent + mantissa
  const std::uint32_t exp = o & kShiftedExp;
  const std::uint32_t normal = o + ((127u - 15u) << 23);  // rebias the exponent
  // Inf/NaN: exponent all ones; a NaN also gets the quiet bit.
  const std::uint32_t inf_nan =
      (o + ((255u - 31u) << 23)) | (static_cast<std::uint32_t>((h & 0x3FFu) != 0) << 22);
  // Zero or subnormal (mant * 2^-24): build 2^-14 * (1 + mant/1024) and
  // subtract the implicit 2^-14; exact, and every operand is a normal float.
  const std::uint32_t subnormal =
      FloatToBits(BitsToFloat(o + (113u << 23)) - BitsToFloat(113u << 23));
  // Select with masks rather than ?: so the compiler keeps the loop
  // branch-free (it will not if-convert around a float operation).
  const std::uint32_t is_inf_nan = 0u - static_cast<std::uint32_t>(exp == kShiftedExp);
  const std::uint32_t is_subnormal = 0u - static_cast<std::uint32_t>(exp == 0);
  const std::uint32_t magnitude =
      (inf_nan & is_inf_nan) | (subnormal & is_subnormal) | (normal & ~(is_inf_nan | is_subnormal));
  return BitsToFloat(magnitude | (static_cast<std::uint32_t>(h & 0x8000u) << 16));
}

// binary32 -> binary16 with round-to-nearest-even, gradual underflow and
// overflow to Inf; NaN -> quiet NaN keeping the top payload bits (as F16C's
// VCVTPS2PH with _MM_FROUND_TO_NEAREST_INT).
inline std::uint16_t FloatToHalfBits(float f) {
  const std::uint32_t x = FloatToBits(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
  // 65520 is halfway between the largest half (65504, odd mantissa) and 2^16,
  // so it and everything above round to Inf.
  if (ax >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (ax < 0x38800000u) {  // below 2^-14: a half subnormal or zero
    // Up to 2^-25 (half of the smallest subnormal, a tie rounding to even 0).
    if (ax <= 0x33000000u) return static_cast<std::uint16_t>(sign);
    const std::uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;  // value = m * 2^(e-150)
    const std::uint32_t shift = 126u - (ax >> 23);         // 14..24: m >> shift = value * 2^24
    std::uint32_t q = m >> shift;
    const std::uint32_t rem = m & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;  // may carry into the exponent: fine
    return static_cast<std::uint16_t>(sign | q);
  }
  // Normal: rebias the exponent (127 -> 15) and round the 13 dropped bits to
  // nearest even; a carry propagates into the exponent correctly.
  const std::uint32_t rebased = ax - 0x38000000u;
  return static_cast<std::uint16_t>(sign | ((rebased + 0xFFFu + ((rebased >> 13) & 1u)) >> 13));
}

inline float BFloat16BitsToFloat(std::uint16_t h) {
  return BitsToFloat(static_cast<std::uint32_t>(h) << 16);
}

// binary32 -> bfloat16 with round-to-nearest-even (subnormals kept, overflow
// to Inf); NaN -> quiet NaN keeping the top payload bits.
inline std::uint16_t FloatToBFloat16Bits(float f) {
  const std::uint32_t x = FloatToBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace
}  // namespace strata::kernels

#endif  // STRATA_KERNELS_HALF_INL_H_
