// IEEE binary16 <-> float32 conversion for .npy float16 data.
//
// Kept local to the dataset module (rather than using the kernels' copy) so
// that reading and writing files needs nothing above src/base. Scalar: file
// I/O, not conversion, bounds the throughput here.
#ifndef STRATA_DATASET_HALF_H_
#define STRATA_DATASET_HALF_H_

#include <cstdint>

namespace strata::dataset_internal {

// Exact widening; NaN stays NaN (payload kept), infinities and subnormals exact.
float HalfToFloat(std::uint16_t h);
// Round-to-nearest-even narrowing; overflow gives +-Inf, NaN gives a quiet NaN.
std::uint16_t FloatToHalf(float f);
// True when the bit pattern is a half NaN or +-Inf (exponent all ones).
inline bool HalfIsNonFinite(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u; }

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_HALF_H_
