// Distance kernels: squared L2, inner product and cosine over float32,
// float16, bfloat16, uint8 and int8 vectors, with a scalar reference and
// AVX2 / AVX-512 implementations chosen once at run time (never -march=native).
// This is the internal (src/) API used by the quantisers, graph, IVF and
// search layers; tools and bindings use include/strata/distance.h instead.
//
// Conventions
// - The typed kernels return the *raw* quantity as float: l2_* returns the
//   squared Euclidean distance, ip_* the plain dot product <a, b> (not
//   negated), cos_* the cosine similarity <a, b> / (|a| |b|) in [-1, 1].
//   The `distance` table below holds the "smaller is nearer" forms
//   (squared L2, -<a, b>, 1 - cos) that indexes rank by.
// - Cosine is always computed exactly from the dot product and both norms in
//   one pass; it never assumes normalised input and never silently turns into
//   L2. A zero vector (squared norm 0) has cosine similarity 0, i.e. cosine
//   distance 1, against every vector including itself. For float types the
//   norms are accumulated in float32, so a vector whose squared norm
//   underflows float32 (every |x_i| below ~1e-19) counts as a zero vector.
//   For float types cos(a, a) is exactly 1 and cos(a, -a) exactly -1 (a != 0)
//   because the dot product and the norms go through identical arithmetic;
//   for integer types with |a|^2 > 2^26 the double product |a|^2 |a|^2 may
//   round, leaving a cosine distance of at most ~1e-16 instead of 0.
// - Half types (float16 IEEE binary16, bfloat16) are stored as uint16_t bit
//   patterns and computed in float32. One documented hardware difference: the
//   AVX-512 bfloat16 inner product and cosine use VDPBF16PS, which treats
//   bfloat16 subnormal inputs (|x| < 2^-126, never seen in real embeddings) as
//   zero; every other kernel keeps subnormals.
// - uint8/int8 kernels (including cosine's dot product and norms) accumulate
//   exactly in integers (int32 lanes flushed to int64 every 16,384 elements,
//   so no dimension overflows) and return the exact value rounded once to
//   float (exact up to 2^24).
// - float kernels accumulate in float32 with several independent
//   accumulators, so ISAs differ from each other only in summation order
//   (relative error ~ dim * 2^-24 of sum |a_i b_i| in the worst case).
// - `dim` may be any value >= 0 (odd dimensions, 1, 3, 127, 769 ...); pointers
//   need no particular alignment. dim = 0 gives 0 (cosine: similarity 0).
// - Thread-safe: kernels are pure functions; tables are immutable.
#ifndef STRATA_KERNELS_DISTANCE_H_
#define STRATA_KERNELS_DISTANCE_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "strata/types.h"

namespace strata::kernels {

// The instruction sets a kernel table can be built for, lowest first.
// kAvx2 needs AVX2 + FMA + F16C + BMI2 + POPCNT; kAvx512 additionally needs
// AVX-512 F/BW/DQ/VL/VNNI/BF16/VPOPCNTDQ (Zen 4+, Sapphire Rapids+) and OS
// support for the ZMM state.
enum class Isa : std::uint8_t { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };
inline constexpr int kNumIsas = 3;

// "scalar", "avx2" or "avx512".
std::string_view IsaName(Isa isa);
// The best ISA this CPU and OS support (checks CPUID and XCR0), capped by the
// env var STRATA_ISA=scalar|avx2|avx512 (for testing and comparisons; read on
// every call; an unknown value is ignored with a one-time warning on stderr).
Isa DetectIsa();
// The best ISA the hardware supports, ignoring STRATA_ISA.
Isa HardwareIsa();

// Number of Metric and ElementType enumerators (strata/types.h), the shape of
// DistanceKernels::distance.
inline constexpr std::size_t kNumMetrics = 3;
inline constexpr std::size_t kNumElementTypes = 5;

// A "smaller is nearer" distance over two vectors of one element type, passed
// as untyped pointers to `dim` elements each (see DistanceKernels::distance).
using ErasedDistanceFn = float (*)(const void* a, const void* b, std::size_t dim);

// One table of function pointers per ISA. Resolved once (GetKernels /
// BestKernels) and held by whoever computes distances, so the hot loop makes
// one indirect call. Every entry is non-null in every table.
struct DistanceKernels {
  Isa isa = Isa::kScalar;
  // Same-type kernels; a and b point to `dim` elements each.
  float (*l2_f32)(const float* a, const float* b, std::size_t dim) = nullptr;
  float (*ip_f32)(const float* a, const float* b, std::size_t dim) = nullptr;
  float (*cos_f32)(const float* a, const float* b, std::size_t dim) = nullptr;
  float (*l2_f16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*ip_f16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*cos_f16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*l2_bf16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*ip_bf16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*cos_bf16)(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*l2_u8)(const std::uint8_t* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*ip_u8)(const std::uint8_t* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*cos_u8)(const std::uint8_t* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*l2_i8)(const std::int8_t* a, const std::int8_t* b, std::size_t dim) = nullptr;
  float (*ip_i8)(const std::int8_t* a, const std::int8_t* b, std::size_t dim) = nullptr;
  float (*cos_i8)(const std::int8_t* a, const std::int8_t* b, std::size_t dim) = nullptr;
  // Mixed precision: a float32 query `a` against float16 / bfloat16 / uint8 /
  // int8 data `b` (used when queries stay float but the base is compressed,
  // e.g. reranking or scalar-quantised codes). Squared L2 and plain <a, b>.
  float (*l2_f32_u8)(const float* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*ip_f32_u8)(const float* a, const std::uint8_t* b, std::size_t dim) = nullptr;
  float (*l2_f32_i8)(const float* a, const std::int8_t* b, std::size_t dim) = nullptr;
  float (*ip_f32_i8)(const float* a, const std::int8_t* b, std::size_t dim) = nullptr;
  float (*l2_f32_f16)(const float* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*ip_f32_f16)(const float* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*l2_f32_bf16)(const float* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  float (*ip_f32_bf16)(const float* a, const std::uint16_t* b, std::size_t dim) = nullptr;
  // "Smaller is nearer" distances indexed [Metric][ElementType] (enum values
  // of strata/types.h): kL2 -> squared L2, kInnerProduct -> -<a, b>,
  // kCosine -> 1 - cos(a, b) (computed in double from the exact parts, then
  // rounded once; a zero vector gives 1). Operands are `dim` elements of that
  // ElementType (uint16_t bit patterns for the half types).
  ErasedDistanceFn distance[kNumMetrics][kNumElementTypes] = {};
};

// Returns the table for `isa` (ignoring STRATA_ISA); nullptr if that ISA is
// not compiled in or not supported by this CPU/OS.
const DistanceKernels* GetKernels(Isa isa);
// The table for DetectIsa(), resolved on the first call and then fixed for
// the process (later STRATA_ISA changes do not affect it); never null.
const DistanceKernels& BestKernels();
// BestKernels().distance[metric][type]; nullptr only for out-of-range enum
// values (e.g. a corrupt byte cast to Metric).
ErasedDistanceFn GetDistanceFn(Metric metric, ElementType type);

// float16 / bfloat16 <-> float32 conversion (round-to-nearest-even on the way
// down, subnormals kept, overflow to +-Inf; NaN stays NaN with the quiet bit
// set and the top payload bits kept, as F16C does). Scalar; bulk conversions
// use the *N forms (SIMD where available; bit-identical to the scalar ones).
// Arrays are `n` elements; in and out must not overlap.
float HalfToFloat(std::uint16_t h);
std::uint16_t FloatToHalf(float f);
float BFloat16ToFloat(std::uint16_t h);
std::uint16_t FloatToBFloat16(float f);
void HalfToFloatN(const std::uint16_t* in, float* out, std::size_t n);
void FloatToHalfN(const float* in, std::uint16_t* out, std::size_t n);
void BFloat16ToFloatN(const std::uint16_t* in, float* out, std::size_t n);
void FloatToBFloat16N(const float* in, std::uint16_t* out, std::size_t n);

// Squared L2 norm of a float32 vector of `dim` elements (float32 accumulation).
float SquaredNorm(const float* a, std::size_t dim);
// Scales `a` (dim elements) to unit L2 norm. The norm is computed in double
// when float32 would overflow or underflow. Leaves a zero vector (and one with
// a NaN/Inf element) unchanged and returns false for it; callers decide
// whether a zero vector under cosine is an error.
bool NormalizeInPlace(float* a, std::size_t dim);

}  // namespace strata::kernels

#endif  // STRATA_KERNELS_DISTANCE_H_
