// Distance kernels: squared L2 and inner product over float32, float16,
// bfloat16, uint8 and int8 vectors, with a scalar reference and AVX2 / AVX-512
// implementations chosen once at run time (never -march=native).
//
// Conventions
// - Every kernel returns the *raw* quantity as float: L2 returns the squared
//   Euclidean distance, IP returns the plain dot product <a, b> (not negated).
//   Turning IP into a "smaller is nearer" distance (-<a,b>) or cosine
//   (1 - <a,b> on normalised data) is the caller's job (see metric.h).
// - Half types (float16 IEEE binary16, bfloat16) are stored as uint16_t bit
//   patterns and computed in float32.
// - uint8/int8 kernels accumulate exactly in int32 and return the exact value
//   as float (exact up to 2^24; beyond, float rounding only).
// - `dim` may be any value >= 0 (odd dimensions, 1, 3, 127, 769 ...); pointers
//   need no particular alignment.
// - Thread-safe: kernels are pure functions.
#ifndef STRATA_KERNELS_DISTANCE_H_
#define STRATA_KERNELS_DISTANCE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "strata/types.h"

namespace strata::kernels {

// The instruction sets a kernel table can be built for, lowest first.
enum class Isa : std::uint8_t { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };
std::string_view IsaName(Isa isa);
// The best ISA this CPU and OS support (checks CPUID and XCR0). The env var
// STRATA_ISA=scalar|avx2|avx512 caps it (for testing and comparisons).
Isa DetectIsa();

// One table of function pointers per ISA. Resolved once (GetKernels) and held
// by whoever computes distances, so the hot loop makes one indirect call.
struct DistanceKernels {
  Isa isa = Isa::kScalar;
  float (*l2_f32)(const float* a, const float* b, std::size_t dim) = nullptr;
  float (*ip_f32)(const float* a, const float* b, std::size_t dim) = nullptr;
  float (*l2_f16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*ip_f16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*l2_bf16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*ip_bf16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*l2_u8)(const std::uint8_t* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*ip_u8)(const std::uint8_t* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*l2_i8)(const std::int8_t* a, const std::int8_t* b, std::size_t dim) = nullptr;
  float (*ip_i8)(const std::int8_t* a, const std::int8_t* b, std::size_t dim) = nullptr;
  // Squared L2 from a float32 query to float16 / bfloat16 / uint8 / int8 data
  // (mixed precision; used when queries are float but the base is compressed).
  float (*l2_f32_u8)(const float* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*ip_f32_u8)(const float* a, const std::uint8_t* b, std::size_t dim) = nullptr;
};

// Returns the table for `isa`; if that ISA is not compiled in or not supported
// by this CPU, returns nullptr.
const DistanceKernels* GetKernels(Isa isa);
// The table for DetectIsa(); never null.
const DistanceKernels& BestKernels();

// float16 / bfloat16 <-> float32 conversion (round-to-nearest-even on the way
// down; NaN stays NaN). Scalar; bulk conversions use the *_n forms.
float HalfToFloat(std::uint16_t h);
std::uint16_t FloatToHalf(float f);
float BFloat16ToFloat(std::uint16_t h);
std::uint16_t FloatToBFloat16(float f);
void HalfToFloatN(const std::uint16_t* in, float* out, std::size_t n);
void FloatToHalfN(const float* in, std::uint16_t* out, std::size_t n);
void BFloat16ToFloatN(const std::uint16_t* in, float* out, std::size_t n);
void FloatToBFloat16N(const float* in, std::uint16_t* out, std::size_t n);

// Squared L2 norm and in-place normalisation of a float32 vector. Normalise
// leaves a zero vector unchanged and returns false for it (callers decide
// whether a zero vector under cosine is an error).
float SquaredNorm(const float* a, std::size_t dim);
bool NormalizeInPlace(float* a, std::size_t dim);

}  // namespace strata::kernels

#endif  // STRATA_KERNELS_DISTANCE_H_
