// Builds a DistanceKernels table from one ISA's typed kernels, adding the
// derived entries every ISA shares: cosine similarity from (dot, |a|^2, |b|^2)
// and the type-erased "smaller is nearer" distances.
//
// Included by exactly the per-ISA kernel translation units. Everything has
// internal linkage on purpose (unnamed namespace in a header): each includer
// is compiled with different ISA flags, and a shared inline function would be
// merged by the linker, possibly keeping an AVX-512-encoded copy that then
// runs on a CPU without AVX-512.
//
// Each includer defines a struct `Impl` with static constexpr function
// pointers named as below (L2F32, IpF32, CosF32 returning CosParts, ...)
// and calls MakeKernelTable<Impl>(isa).
#ifndef STRATA_KERNELS_DISTANCE_TABLE_INL_H_
#define STRATA_KERNELS_DISTANCE_TABLE_INL_H_

#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"

namespace strata::kernels {
namespace {  // NOLINT(cert-dcl59-cpp,google-build-namespaces): see file comment

// The three sums cosine needs, gathered in one pass over both vectors. Exact
// integers for uint8/int8 (every value below 2^53), float32 sums otherwise.
struct CosParts {
  double dot = 0;
  double norm_a = 0;  // |a|^2
  double norm_b = 0;  // |b|^2
};

// <a,b> / (|a| |b|) in double, clamped to [-1, 1] against rounding; 0 when
// either vector is zero. NaN inputs propagate (the comparisons below are
// false for NaN). sqrt(norm_a * norm_b) keeps cos(a, a) exactly 1: for float
// parts the product of two floats is exact in double, so the root is exact.
inline double CosineSimilarity(const CosParts& p) {
  if (p.norm_a == 0 || p.norm_b == 0) return 0.0;
  const double s = p.dot / __builtin_sqrt(p.norm_a * p.norm_b);
  if (s > 1.0) return 1.0;
  if (s < -1.0) return -1.0;
  return s;
}

template <typename T>
using TypedFn = float (*)(const T*, const T*, std::size_t);
template <typename T>
using PartsFn = CosParts (*)(const T*, const T*, std::size_t);

template <typename T, PartsFn<T> kParts>
float CosSimilarityOf(const T* a, const T* b, std::size_t dim) {
  return static_cast<float>(CosineSimilarity(kParts(a, b, dim)));
}

template <typename T, TypedFn<T> kKernel>
float ErasedRaw(const void* a, const void* b, std::size_t dim) {
  return kKernel(static_cast<const T*>(a), static_cast<const T*>(b), dim);
}

template <typename T, TypedFn<T> kKernel>
float ErasedNegated(const void* a, const void* b, std::size_t dim) {
  return -kKernel(static_cast<const T*>(a), static_cast<const T*>(b), dim);
}

// 1 - cos in double, rounded once, so distances near 0 keep their precision.
template <typename T, PartsFn<T> kParts>
float ErasedCosineDistance(const void* a, const void* b, std::size_t dim) {
  return static_cast<float>(
      1.0 - CosineSimilarity(kParts(static_cast<const T*>(a), static_cast<const T*>(b), dim)));
}

template <typename T, TypedFn<T> kL2, TypedFn<T> kIp, PartsFn<T> kCos>
constexpr void FillDistanceRow(DistanceKernels& k, ElementType type) {
  const auto t = static_cast<std::size_t>(type);
  k.distance[static_cast<std::size_t>(Metric::kL2)][t] = &ErasedRaw<T, kL2>;
  k.distance[static_cast<std::size_t>(Metric::kInnerProduct)][t] = &ErasedNegated<T, kIp>;
  k.distance[static_cast<std::size_t>(Metric::kCosine)][t] = &ErasedCosineDistance<T, kCos>;
}

template <class Impl>
constexpr DistanceKernels MakeKernelTable(Isa isa) {
  using u16 = std::uint16_t;
  DistanceKernels k;
  k.isa = isa;
  k.l2_f32 = Impl::L2F32;
  k.ip_f32 = Impl::IpF32;
  k.cos_f32 = &CosSimilarityOf<float, Impl::CosF32>;
  k.l2_f16 = Impl::L2F16;
  k.ip_f16 = Impl::IpF16;
  k.cos_f16 = &CosSimilarityOf<u16, Impl::CosF16>;
  k.l2_bf16 = Impl::L2BF16;
  k.ip_bf16 = Impl::IpBF16;
  k.cos_bf16 = &CosSimilarityOf<u16, Impl::CosBF16>;
  k.l2_u8 = Impl::L2U8;
  k.ip_u8 = Impl::IpU8;
  k.cos_u8 = &CosSimilarityOf<std::uint8_t, Impl::CosU8>;
  k.l2_i8 = Impl::L2I8;
  k.ip_i8 = Impl::IpI8;
  k.cos_i8 = &CosSimilarityOf<std::int8_t, Impl::CosI8>;
  k.l2_f32_u8 = Impl::L2F32U8;
  k.ip_f32_u8 = Impl::IpF32U8;
  k.l2_f32_i8 = Impl::L2F32I8;
  k.ip_f32_i8 = Impl::IpF32I8;
  k.l2_f32_f16 = Impl::L2F32F16;
  k.ip_f32_f16 = Impl::IpF32F16;
  k.l2_f32_bf16 = Impl::L2F32BF16;
  k.ip_f32_bf16 = Impl::IpF32BF16;
  FillDistanceRow<float, Impl::L2F32, Impl::IpF32, Impl::CosF32>(k, ElementType::kFloat32);
  FillDistanceRow<u16, Impl::L2F16, Impl::IpF16, Impl::CosF16>(k, ElementType::kFloat16);
  FillDistanceRow<u16, Impl::L2BF16, Impl::IpBF16, Impl::CosBF16>(k, ElementType::kBFloat16);
  FillDistanceRow<std::uint8_t, Impl::L2U8, Impl::IpU8, Impl::CosU8>(k, ElementType::kUint8);
  FillDistanceRow<std::int8_t, Impl::L2I8, Impl::IpI8, Impl::CosI8>(k, ElementType::kInt8);
  return k;
}

// Integer kernels keep int32 lanes and flush them to int64 every kIntChunk
// elements: |a_i * b_i| <= 255 * 255, and 16384 * 65025 < 2^31, so no lane and
// no int32 horizontal sum of a chunk can overflow, whatever the dimension.
inline constexpr std::size_t kIntChunk = 16384;

}  // namespace
}  // namespace strata::kernels

#endif  // STRATA_KERNELS_DISTANCE_TABLE_INL_H_
