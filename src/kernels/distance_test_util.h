// Test helpers for the kernel tests: an enumeration of every kernel in a
// DistanceKernels table, random and special vectors of each element type, and
// naive double-precision references.
#ifndef STRATA_KERNELS_DISTANCE_TEST_UTIL_H_
#define STRATA_KERNELS_DISTANCE_TEST_UTIL_H_

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/distance.h"
#include "strata/types.h"

namespace strata::kernels::testing {

enum class Op { kL2, kIp, kCos };

// One entry of a DistanceKernels table, callable on untyped operands.
struct KernelRef {
  const char* name;
  ElementType a_type;
  ElementType b_type;
  Op op;  // kCos kernels return the cosine similarity
  float (*call)(const DistanceKernels& k, const void* a, const void* b, std::size_t dim);
};

template <auto kMember, typename TA, typename TB>
float CallMember(const DistanceKernels& k, const void* a, const void* b, std::size_t dim) {
  return (k.*kMember)(static_cast<const TA*>(a), static_cast<const TB*>(b), dim);
}

inline std::vector<KernelRef> AllKernels() {
  using D = DistanceKernels;
  using u16 = std::uint16_t;
  using u8 = std::uint8_t;
  using i8 = std::int8_t;
  constexpr ElementType kF32 = ElementType::kFloat32, kF16 = ElementType::kFloat16,
                        kBF16 = ElementType::kBFloat16, kU8 = ElementType::kUint8,
                        kI8 = ElementType::kInt8;
  return {
      {"l2_f32", kF32, kF32, Op::kL2, &CallMember<&D::l2_f32, float, float>},
      {"ip_f32", kF32, kF32, Op::kIp, &CallMember<&D::ip_f32, float, float>},
      {"cos_f32", kF32, kF32, Op::kCos, &CallMember<&D::cos_f32, float, float>},
      {"l2_f16", kF16, kF16, Op::kL2, &CallMember<&D::l2_f16, u16, u16>},
      {"ip_f16", kF16, kF16, Op::kIp, &CallMember<&D::ip_f16, u16, u16>},
      {"cos_f16", kF16, kF16, Op::kCos, &CallMember<&D::cos_f16, u16, u16>},
      {"l2_bf16", kBF16, kBF16, Op::kL2, &CallMember<&D::l2_bf16, u16, u16>},
      {"ip_bf16", kBF16, kBF16, Op::kIp, &CallMember<&D::ip_bf16, u16, u16>},
      {"cos_bf16", kBF16, kBF16, Op::kCos, &CallMember<&D::cos_bf16, u16, u16>},
      {"l2_u8", kU8, kU8, Op::kL2, &CallMember<&D::l2_u8, u8, u8>},
      {"ip_u8", kU8, kU8, Op::kIp, &CallMember<&D::ip_u8, u8, u8>},
      {"cos_u8", kU8, kU8, Op::kCos, &CallMember<&D::cos_u8, u8, u8>},
      {"l2_i8", kI8, kI8, Op::kL2, &CallMember<&D::l2_i8, i8, i8>},
      {"ip_i8", kI8, kI8, Op::kIp, &CallMember<&D::ip_i8, i8, i8>},
      {"cos_i8", kI8, kI8, Op::kCos, &CallMember<&D::cos_i8, i8, i8>},
      {"l2_f32_u8", kF32, kU8, Op::kL2, &CallMember<&D::l2_f32_u8, float, u8>},
      {"ip_f32_u8", kF32, kU8, Op::kIp, &CallMember<&D::ip_f32_u8, float, u8>},
      {"l2_f32_i8", kF32, kI8, Op::kL2, &CallMember<&D::l2_f32_i8, float, i8>},
      {"ip_f32_i8", kF32, kI8, Op::kIp, &CallMember<&D::ip_f32_i8, float, i8>},
      {"l2_f32_f16", kF32, kF16, Op::kL2, &CallMember<&D::l2_f32_f16, float, u16>},
      {"ip_f32_f16", kF32, kF16, Op::kIp, &CallMember<&D::ip_f32_f16, float, u16>},
      {"l2_f32_bf16", kF32, kBF16, Op::kL2, &CallMember<&D::l2_f32_bf16, float, u16>},
      {"ip_f32_bf16", kF32, kBF16, Op::kIp, &CallMember<&D::ip_f32_bf16, float, u16>},
  };
}

inline bool IsInteger(ElementType t) { return t == ElementType::kUint8 || t == ElementType::kInt8; }
// True when the kernel's result is an exact integer computation.
inline bool IsExact(const KernelRef& k) { return IsInteger(k.a_type) && IsInteger(k.b_type); }

// The tables of every ISA this build and CPU can run, scalar first.
inline std::vector<const DistanceKernels*> AvailableTables() {
  std::vector<const DistanceKernels*> out;
  for (int i = 0; i < kNumIsas; ++i) {
    if (const DistanceKernels* k = GetKernels(static_cast<Isa>(i))) out.push_back(k);
  }
  return out;
}

// Element i of a vector of `type` as a double (half types through the scalar
// software conversion, which convert_test checks against hardware).
inline double ElementValue(ElementType type, const void* v, std::size_t i) {
  switch (type) {
    case ElementType::kFloat32:
      return static_cast<const float*>(v)[i];
    case ElementType::kFloat16:
      return HalfToFloat(static_cast<const std::uint16_t*>(v)[i]);
    case ElementType::kBFloat16:
      return BFloat16ToFloat(static_cast<const std::uint16_t*>(v)[i]);
    case ElementType::kUint8:
      return static_cast<const std::uint8_t*>(v)[i];
    case ElementType::kInt8:
      return static_cast<const std::int8_t*>(v)[i];
  }
  return 0;
}

// Naive double-precision results plus the scale of the rounding error a
// float32 evaluation may make (sum of |terms|).
struct Reference {
  double value = 0;      // squared L2, dot product, or cosine similarity
  double abs_terms = 0;  // sum |term_i|
};

inline Reference NaiveReference(Op op, ElementType ta, ElementType tb, const void* a, const void* b,
                                std::size_t dim) {
  Reference r;
  double dot = 0, na = 0, nb = 0;
  for (std::size_t i = 0; i < dim; ++i) {
    const double x = ElementValue(ta, a, i), y = ElementValue(tb, b, i);
    switch (op) {
      case Op::kL2:
        r.value += (x - y) * (x - y);
        r.abs_terms += (x - y) * (x - y);
        break;
      case Op::kIp:
        r.value += x * y;
        r.abs_terms += std::fabs(x * y);
        break;
      case Op::kCos:
        dot += x * y;
        na += x * x;
        nb += y * y;
        break;
    }
  }
  if (op == Op::kCos) {
    r.value = (na == 0 || nb == 0) ? 0.0 : dot / std::sqrt(na * nb);
    r.value = std::fmax(-1.0, std::fmin(1.0, r.value));
    r.abs_terms = 1.0;
  }
  return r;
}

// Worst-case float32 rounding bound for a sum of `dim` terms in any order
// (each partial sum and each product/difference rounds once).
inline double FloatTolerance(const Reference& r, std::size_t dim) {
  const double u = std::ldexp(1.0, -24);
  return (static_cast<double>(dim) + 8.0) * u * r.abs_terms * 4.0 + 1e-30;
}

// `n` random elements of `type` as raw bytes: N(0, 1) floats (rounded to the
// half types), uniform integers over the whole range.
inline std::vector<std::uint8_t> RandomVector(ElementType type, std::size_t n,
                                              std::mt19937_64& rng) {
  std::vector<std::uint8_t> bytes(n * ElementSize(type) + 1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  for (std::size_t i = 0; i < n; ++i) {
    switch (type) {
      case ElementType::kFloat32: {
        const float f = normal(rng);
        std::memcpy(bytes.data() + 4 * i, &f, 4);
        break;
      }
      case ElementType::kFloat16: {
        const std::uint16_t h = FloatToHalf(normal(rng));
        std::memcpy(bytes.data() + 2 * i, &h, 2);
        break;
      }
      case ElementType::kBFloat16: {
        const std::uint16_t h = FloatToBFloat16(normal(rng));
        std::memcpy(bytes.data() + 2 * i, &h, 2);
        break;
      }
      case ElementType::kUint8:
      case ElementType::kInt8:
        bytes[i] = static_cast<std::uint8_t>(byte(rng));
        break;
    }
  }
  bytes.resize(n * ElementSize(type));
  return bytes;
}

}  // namespace strata::kernels::testing

#endif  // STRATA_KERNELS_DISTANCE_TEST_UTIL_H_
