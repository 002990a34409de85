// Scalar reference kernels: the definition every SIMD kernel is tested
// against, and the fallback on CPUs without AVX2. Compiled with the baseline
// flags only (x86-64 SSE2 or any other architecture).
//
// Float kernels use four interleaved float32 accumulators: this breaks the
// add dependency chain (the compiler may not reassociate float sums itself)
// and keeps the rounding error close to the SIMD kernels'. Integer kernels
// sum exactly in int32 per kIntChunk block, which the compiler vectorises,
// and flush to int64.
#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"
#include "kernels/distance_isa.h"
#include "kernels/distance_table_inl.h"
#include "kernels/half_inl.h"

namespace strata::kernels {
namespace {

// Element readers: storage type T and its float32 value.
struct F32 {
  using T = float;
  static float Get(float x) { return x; }
};
struct BF16 {
  using T = std::uint16_t;
  static float Get(std::uint16_t h) { return BFloat16BitsToFloat(h); }
};
struct U8 {
  using T = std::uint8_t;
  static float Get(std::uint8_t x) { return static_cast<float>(x); }
};
struct I8 {
  using T = std::int8_t;
  static float Get(std::int8_t x) { return static_cast<float>(x); }
};

template <class A, class B>
float L2Float(const typename A::T* a, const typename B::T* b, std::size_t dim) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= dim; i += 4) {
    const float d0 = A::Get(a[i]) - B::Get(b[i]);
    const float d1 = A::Get(a[i + 1]) - B::Get(b[i + 1]);
    const float d2 = A::Get(a[i + 2]) - B::Get(b[i + 2]);
    const float d3 = A::Get(a[i + 3]) - B::Get(b[i + 3]);
    s0 += d0 * d0;
    s1 += d1 * d1;
    s2 += d2 * d2;
    s3 += d3 * d3;
  }
  for (; i < dim; ++i) {
    const float d = A::Get(a[i]) - B::Get(b[i]);
    s0 += d * d;
  }
  return (s0 + s1) + (s2 + s3);
}

template <class A, class B>
float IpFloat(const typename A::T* a, const typename B::T* b, std::size_t dim) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= dim; i += 4) {
    s0 += A::Get(a[i]) * B::Get(b[i]);
    s1 += A::Get(a[i + 1]) * B::Get(b[i + 1]);
    s2 += A::Get(a[i + 2]) * B::Get(b[i + 2]);
    s3 += A::Get(a[i + 3]) * B::Get(b[i + 3]);
  }
  for (; i < dim; ++i) s0 += A::Get(a[i]) * B::Get(b[i]);
  return (s0 + s1) + (s2 + s3);
}

template <class E>
CosParts CosFloat(const typename E::T* a, const typename E::T* b, std::size_t dim) {
  float d0 = 0, d1 = 0, na0 = 0, na1 = 0, nb0 = 0, nb1 = 0;
  std::size_t i = 0;
  for (; i + 2 <= dim; i += 2) {
    const float x0 = E::Get(a[i]), y0 = E::Get(b[i]);
    const float x1 = E::Get(a[i + 1]), y1 = E::Get(b[i + 1]);
    d0 += x0 * y0;
    d1 += x1 * y1;
    na0 += x0 * x0;
    na1 += x1 * x1;
    nb0 += y0 * y0;
    nb1 += y1 * y1;
  }
  if (i < dim) {
    const float x = E::Get(a[i]), y = E::Get(b[i]);
    d0 += x * y;
    na0 += x * x;
    nb0 += y * y;
  }
  return {d0 + d1, na0 + na1, nb0 + nb1};
}

// Exact integer kernels. Each block of at most kIntChunk elements sums in
// int32 (cannot overflow, see kIntChunk), then flushes to int64.
template <typename T>
float L2Int(const T* a, const T* b, std::size_t dim) {
  std::int64_t total = 0;
  for (std::size_t base = 0; base < dim; base += kIntChunk) {
    const std::size_t end = dim - base < kIntChunk ? dim : base + kIntChunk;
    std::int32_t s = 0;
    for (std::size_t i = base; i < end; ++i) {
      const std::int32_t d = static_cast<std::int32_t>(a[i]) - static_cast<std::int32_t>(b[i]);
      s += d * d;
    }
    total += s;
  }
  return static_cast<float>(total);
}

template <typename T>
float IpInt(const T* a, const T* b, std::size_t dim) {
  std::int64_t total = 0;
  for (std::size_t base = 0; base < dim; base += kIntChunk) {
    const std::size_t end = dim - base < kIntChunk ? dim : base + kIntChunk;
    std::int32_t s = 0;
    for (std::size_t i = base; i < end; ++i) {
      s += static_cast<std::int32_t>(a[i]) * static_cast<std::int32_t>(b[i]);
    }
    total += s;
  }
  return static_cast<float>(total);
}

template <typename T>
CosParts CosInt(const T* a, const T* b, std::size_t dim) {
  std::int64_t dot = 0, na = 0, nb = 0;
  for (std::size_t base = 0; base < dim; base += kIntChunk) {
    const std::size_t end = dim - base < kIntChunk ? dim : base + kIntChunk;
    std::int32_t d = 0, x2 = 0, y2 = 0;
    for (std::size_t i = base; i < end; ++i) {
      const std::int32_t x = a[i], y = b[i];
      d += x * y;
      x2 += x * x;
      y2 += y * y;
    }
    dot += d;
    na += x2;
    nb += y2;
  }
  return {static_cast<double>(dot), static_cast<double>(na), static_cast<double>(nb)};
}

// float16 goes through float32 blocks: the branch-free conversion loop
// vectorises (SSE2 on the baseline), a per-element conversion inside the
// accumulation loop does not, and is several times slower.
constexpr std::size_t kHalfBlock = 64;

inline void HalfBlockToFloat(const std::uint16_t* in, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = HalfBitsToFloat(in[i]);
}

// Applies the float32 kernel `kKernel` block by block, converting whichever
// operands are float16 (kHalfA / kHalfB), and sums the block results.
template <bool kHalfA, bool kHalfB, float (*kKernel)(const float*, const float*, std::size_t)>
float HalfBlocked(const void* a, const void* b, std::size_t dim) {
  float fa[kHalfBlock], fb[kHalfBlock];
  float total = 0;
  for (std::size_t i = 0; i < dim; i += kHalfBlock) {
    const std::size_t n = dim - i < kHalfBlock ? dim - i : kHalfBlock;
    if (kHalfA) HalfBlockToFloat(static_cast<const std::uint16_t*>(a) + i, fa, n);
    if (kHalfB) HalfBlockToFloat(static_cast<const std::uint16_t*>(b) + i, fb, n);
    total += kKernel(kHalfA ? fa : static_cast<const float*>(a) + i,
                     kHalfB ? fb : static_cast<const float*>(b) + i, n);
  }
  return total;
}

float L2F16(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) {
  return HalfBlocked<true, true, &L2Float<F32, F32>>(a, b, dim);
}
float IpF16(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) {
  return HalfBlocked<true, true, &IpFloat<F32, F32>>(a, b, dim);
}
float L2F32F16(const float* a, const std::uint16_t* b, std::size_t dim) {
  return HalfBlocked<false, true, &L2Float<F32, F32>>(a, b, dim);
}
float IpF32F16(const float* a, const std::uint16_t* b, std::size_t dim) {
  return HalfBlocked<false, true, &IpFloat<F32, F32>>(a, b, dim);
}

CosParts CosF16(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) {
  float fa[kHalfBlock], fb[kHalfBlock];
  CosParts total;
  for (std::size_t i = 0; i < dim; i += kHalfBlock) {
    const std::size_t n = dim - i < kHalfBlock ? dim - i : kHalfBlock;
    HalfBlockToFloat(a + i, fa, n);
    HalfBlockToFloat(b + i, fb, n);
    const CosParts p = CosFloat<F32>(fa, fb, n);
    total.dot += p.dot;
    total.norm_a += p.norm_a;
    total.norm_b += p.norm_b;
  }
  return total;
}

struct Impl {
  static constexpr auto L2F32 = &L2Float<F32, F32>;
  static constexpr auto IpF32 = &IpFloat<F32, F32>;
  static constexpr auto CosF32 = &CosFloat<F32>;
  static constexpr auto L2F16 = &strata::kernels::L2F16;
  static constexpr auto IpF16 = &strata::kernels::IpF16;
  static constexpr auto CosF16 = &strata::kernels::CosF16;
  static constexpr auto L2BF16 = &L2Float<BF16, BF16>;
  static constexpr auto IpBF16 = &IpFloat<BF16, BF16>;
  static constexpr auto CosBF16 = &CosFloat<BF16>;
  static constexpr auto L2U8 = &L2Int<std::uint8_t>;
  static constexpr auto IpU8 = &IpInt<std::uint8_t>;
  static constexpr auto CosU8 = &CosInt<std::uint8_t>;
  static constexpr auto L2I8 = &L2Int<std::int8_t>;
  static constexpr auto IpI8 = &IpInt<std::int8_t>;
  static constexpr auto CosI8 = &CosInt<std::int8_t>;
  static constexpr auto L2F32U8 = &L2Float<F32, U8>;
  static constexpr auto IpF32U8 = &IpFloat<F32, U8>;
  static constexpr auto L2F32I8 = &L2Float<F32, I8>;
  static constexpr auto IpF32I8 = &IpFloat<F32, I8>;
  static constexpr auto L2F32F16 = &strata::kernels::L2F32F16;
  static constexpr auto IpF32F16 = &strata::kernels::IpF32F16;
  static constexpr auto L2F32BF16 = &L2Float<F32, BF16>;
  static constexpr auto IpF32BF16 = &IpFloat<F32, BF16>;
};

constexpr DistanceKernels kScalarTable = MakeKernelTable<Impl>(Isa::kScalar);

}  // namespace

const DistanceKernels* ScalarKernelTable() { return &kScalarTable; }

}  // namespace strata::kernels
