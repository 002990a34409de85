// Hardware half conversions (F16C, AVX512-BF16) that convert_test checks the
// software definitions against. Compiled with AVX-512 flags in its own
// translation unit (test_hw_convert.cc); call only when HardwareIsa() says
// the instructions exist (F16C with kAvx2, AVX512-BF16 with kAvx512).
#ifndef STRATA_KERNELS_TEST_HW_CONVERT_H_
#define STRATA_KERNELS_TEST_HW_CONVERT_H_

#include <cstdint>

namespace strata::kernels::testing {

// F16C vcvtph2ps / vcvtps2ph (round to nearest even).
float HwHalfToFloat(std::uint16_t h);
std::uint16_t HwFloatToHalf(float f);
// AVX512-BF16 vcvtneps2bf16 (round to nearest even; flushes subnormal inputs).
std::uint16_t HwFloatToBFloat16(float f);

}  // namespace strata::kernels::testing

#endif  // STRATA_KERNELS_TEST_HW_CONVERT_H_
