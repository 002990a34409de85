// float16 / bfloat16 <-> float32 conversions: the scalar definitions live in
// half_inl.h (shared with the kernels); the bulk forms use F16C / AVX2 when
// the CPU has them, producing bit-identical results.
#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"
#include "kernels/distance_isa.h"
#include "kernels/half_inl.h"

namespace strata::kernels {
#if defined(STRATA_KERNELS_HAVE_X86)
namespace {
// Follows STRATA_ISA like the distance kernels, so `STRATA_ISA=scalar`
// exercises the portable path end to end.
bool UseAvx2() {
  static const bool use = DetectIsa() >= Isa::kAvx2;
  return use;
}
}  // namespace
#endif

float HalfToFloat(std::uint16_t h) { return HalfBitsToFloat(h); }
std::uint16_t FloatToHalf(float f) { return FloatToHalfBits(f); }
float BFloat16ToFloat(std::uint16_t h) { return BFloat16BitsToFloat(h); }
std::uint16_t FloatToBFloat16(float f) { return FloatToBFloat16Bits(f); }

void HalfToFloatN(const std::uint16_t* in, float* out, std::size_t n) {
#if defined(STRATA_KERNELS_HAVE_X86)
  if (UseAvx2()) return Avx2HalfToFloatN(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = HalfBitsToFloat(in[i]);
}

void FloatToHalfN(const float* in, std::uint16_t* out, std::size_t n) {
#if defined(STRATA_KERNELS_HAVE_X86)
  if (UseAvx2()) return Avx2FloatToHalfN(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = FloatToHalfBits(in[i]);
}

void BFloat16ToFloatN(const std::uint16_t* in, float* out, std::size_t n) {
#if defined(STRATA_KERNELS_HAVE_X86)
  if (UseAvx2()) return Avx2BFloat16ToFloatN(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = BFloat16BitsToFloat(in[i]);
}

void FloatToBFloat16N(const float* in, std::uint16_t* out, std::size_t n) {
#if defined(STRATA_KERNELS_HAVE_X86)
  if (UseAvx2()) return Avx2FloatToBFloat16N(in, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = FloatToBFloat16Bits(in[i]);
}

}  // namespace strata::kernels
