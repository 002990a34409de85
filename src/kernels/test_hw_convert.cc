// See test_hw_convert.h. Kept free of gtest and std:: inline code: this file
// has AVX-512 flags, and inline functions it instantiated could be merged
// into the rest of the test binary.
#include "kernels/test_hw_convert.h"

#if defined(STRATA_KERNELS_HAVE_X86)
#include <immintrin.h>

namespace strata::kernels::testing {

float HwHalfToFloat(std::uint16_t h) { return _cvtsh_ss(h); }

std::uint16_t HwFloatToHalf(float f) {
  return static_cast<std::uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

std::uint16_t HwFloatToBFloat16(float f) {
  const __m256bh r = _mm512_cvtneps_pbh(_mm512_set1_ps(f));
  std::uint16_t out[16];
  __builtin_memcpy(out, &r, sizeof(out));
  return out[0];
}

}  // namespace strata::kernels::testing
#else
namespace strata::kernels::testing {
// Never called without x86 hardware support (the tests check HardwareIsa()).
float HwHalfToFloat(std::uint16_t) { return 0.0f; }
std::uint16_t HwFloatToHalf(float) { return 0; }
std::uint16_t HwFloatToBFloat16(float) { return 0; }
}  // namespace strata::kernels::testing
#endif
