// AVX-512 kernels (F/BW/DQ/VL + VNNI + BF16; compiled with STRATA_AVX512_FLAGS
// only, called only after dispatch.cc has checked the CPU and OS).
//
// Float kernels: 4 independent 16-wide FMA accumulators (64 elements per
// iteration); tails use masked loads, which never touch the masked-off bytes,
// so any dimension works without reading past the end of the vectors.
// bfloat16 inner product and cosine use VDPBF16PS (32 products per
// instruction, exact products, float32 sums); it treats bfloat16 subnormals
// as zero, the one documented difference from the scalar reference.
//
// Integer kernels are exact and built on VNNI:
// - vpdpbusd multiplies unsigned by signed bytes, so one operand is biased by
//   128 with a sign-bit flip and the bias is removed with a byte sum:
//     uint8:  a.b = sum a*(b-128) + 128*sum(a)
//     int8:   a.b = sum (a+128)*b - 128*sum(b)
//   (the byte sums are vpdpbusd against a vector of ones).
// - squared L2 widens |a - b| (two saturating subtractions; int8 first mapped
//   to uint8 by a sign flip, which keeps differences) to int16 and squares
//   with vpdpwssd.
// int32 lanes are flushed to int64 every kIntChunk elements.
// GCC 12's own AVX-512 headers trip -Wuninitialized through
// _mm512_undefined_* (GCC bug 105593); silence that for the header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"
#include "kernels/distance_isa.h"
#include "kernels/distance_table_inl.h"

namespace strata::kernels {
namespace {

// Mask of the low n lanes (n < lane count).
inline __mmask16 Mask16(std::size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
inline __mmask32 Mask32(std::size_t n) { return static_cast<__mmask32>(_bzhi_u32(~0u, n)); }
inline __mmask64 Mask64(std::size_t n) { return static_cast<__mmask64>(_bzhi_u64(~0ull, n)); }

// ---------------------------------------------------------------------------
// Float kernels. Loaders turn 16 stored elements into 16 float32 lanes.

struct F32 {
  using T = float;
  static __m512 Load(const float* p) { return _mm512_loadu_ps(p); }
  static __m512 LoadMasked(const float* p, __mmask16 m) { return _mm512_maskz_loadu_ps(m, p); }
};
struct F16 {
  using T = std::uint16_t;
  static __m512 Load(const std::uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 LoadMasked(const std::uint16_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
  }
};
struct BF16 {
  using T = std::uint16_t;
  static __m512 Widen(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static __m512 Load(const std::uint16_t* p) {
    return Widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static __m512 LoadMasked(const std::uint16_t* p, __mmask16 m) {
    return Widen(_mm256_maskz_loadu_epi16(m, p));
  }
};
struct U8 {
  using T = std::uint8_t;
  static __m512 Load(const std::uint8_t* p) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static __m512 LoadMasked(const std::uint8_t* p, __mmask16 m) {
    return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, p)));
  }
};
struct I8 {
  using T = std::int8_t;
  static __m512 Load(const std::int8_t* p) {
    return _mm512_cvtepi32_ps(
        _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
  }
  static __m512 LoadMasked(const std::int8_t* p, __mmask16 m) {
    return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_maskz_loadu_epi8(m, p)));
  }
};

template <class A, class B>
float L2Float(const typename A::T* a, const typename B::T* b, std::size_t dim) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    const __m512 d0 = _mm512_sub_ps(A::Load(a + i), B::Load(b + i));
    const __m512 d1 = _mm512_sub_ps(A::Load(a + i + 16), B::Load(b + i + 16));
    const __m512 d2 = _mm512_sub_ps(A::Load(a + i + 32), B::Load(b + i + 32));
    const __m512 d3 = _mm512_sub_ps(A::Load(a + i + 48), B::Load(b + i + 48));
    s0 = _mm512_fmadd_ps(d0, d0, s0);
    s1 = _mm512_fmadd_ps(d1, d1, s1);
    s2 = _mm512_fmadd_ps(d2, d2, s2);
    s3 = _mm512_fmadd_ps(d3, d3, s3);
  }
  for (; i + 16 <= dim; i += 16) {
    const __m512 d = _mm512_sub_ps(A::Load(a + i), B::Load(b + i));
    s0 = _mm512_fmadd_ps(d, d, s0);
  }
  if (i < dim) {
    const __mmask16 m = Mask16(dim - i);
    const __m512 d = _mm512_sub_ps(A::LoadMasked(a + i, m), B::LoadMasked(b + i, m));
    s1 = _mm512_fmadd_ps(d, d, s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

template <class A, class B>
float IpFloat(const typename A::T* a, const typename B::T* b, std::size_t dim) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    s0 = _mm512_fmadd_ps(A::Load(a + i), B::Load(b + i), s0);
    s1 = _mm512_fmadd_ps(A::Load(a + i + 16), B::Load(b + i + 16), s1);
    s2 = _mm512_fmadd_ps(A::Load(a + i + 32), B::Load(b + i + 32), s2);
    s3 = _mm512_fmadd_ps(A::Load(a + i + 48), B::Load(b + i + 48), s3);
  }
  for (; i + 16 <= dim; i += 16) s0 = _mm512_fmadd_ps(A::Load(a + i), B::Load(b + i), s0);
  if (i < dim) {
    const __mmask16 m = Mask16(dim - i);
    s1 = _mm512_fmadd_ps(A::LoadMasked(a + i, m), B::LoadMasked(b + i, m), s1);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

template <class E>
CosParts CosFloat(const typename E::T* a, const typename E::T* b, std::size_t dim) {
  __m512 d0 = _mm512_setzero_ps(), d1 = _mm512_setzero_ps();
  __m512 na0 = _mm512_setzero_ps(), na1 = _mm512_setzero_ps();
  __m512 nb0 = _mm512_setzero_ps(), nb1 = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m512 x0 = E::Load(a + i), y0 = E::Load(b + i);
    const __m512 x1 = E::Load(a + i + 16), y1 = E::Load(b + i + 16);
    d0 = _mm512_fmadd_ps(x0, y0, d0);
    na0 = _mm512_fmadd_ps(x0, x0, na0);
    nb0 = _mm512_fmadd_ps(y0, y0, nb0);
    d1 = _mm512_fmadd_ps(x1, y1, d1);
    na1 = _mm512_fmadd_ps(x1, x1, na1);
    nb1 = _mm512_fmadd_ps(y1, y1, nb1);
  }
  if (i + 16 <= dim) {
    const __m512 x = E::Load(a + i), y = E::Load(b + i);
    d0 = _mm512_fmadd_ps(x, y, d0);
    na0 = _mm512_fmadd_ps(x, x, na0);
    nb0 = _mm512_fmadd_ps(y, y, nb0);
    i += 16;
  }
  if (i < dim) {
    const __mmask16 m = Mask16(dim - i);
    const __m512 x = E::LoadMasked(a + i, m), y = E::LoadMasked(b + i, m);
    d1 = _mm512_fmadd_ps(x, y, d1);
    na1 = _mm512_fmadd_ps(x, x, na1);
    nb1 = _mm512_fmadd_ps(y, y, nb1);
  }
  return {_mm512_reduce_add_ps(_mm512_add_ps(d0, d1)),
          _mm512_reduce_add_ps(_mm512_add_ps(na0, na1)),
          _mm512_reduce_add_ps(_mm512_add_ps(nb0, nb1))};
}

// ---------------------------------------------------------------------------
// bfloat16 dot products with VDPBF16PS: each instruction multiplies 32 pairs
// and adds them pairwise into 16 float32 lanes.

inline __m512bh LoadBh(const std::uint16_t* p) {
  return (__m512bh)_mm512_loadu_si512(p);  // NOLINT(google-readability-casting): vector bitcast
}
inline __m512bh LoadBhMasked(const std::uint16_t* p, __mmask32 m) {
  return (__m512bh)_mm512_maskz_loadu_epi16(m, p);  // NOLINT(google-readability-casting)
}

float IpBF16Dp(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) {
  __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
  __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 128 <= dim; i += 128) {
    s0 = _mm512_dpbf16_ps(s0, LoadBh(a + i), LoadBh(b + i));
    s1 = _mm512_dpbf16_ps(s1, LoadBh(a + i + 32), LoadBh(b + i + 32));
    s2 = _mm512_dpbf16_ps(s2, LoadBh(a + i + 64), LoadBh(b + i + 64));
    s3 = _mm512_dpbf16_ps(s3, LoadBh(a + i + 96), LoadBh(b + i + 96));
  }
  for (; i + 32 <= dim; i += 32) s0 = _mm512_dpbf16_ps(s0, LoadBh(a + i), LoadBh(b + i));
  if (i < dim) {
    const __mmask32 m = Mask32(dim - i);
    s1 = _mm512_dpbf16_ps(s1, LoadBhMasked(a + i, m), LoadBhMasked(b + i, m));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

CosParts CosBF16Dp(const std::uint16_t* a, const std::uint16_t* b, std::size_t dim) {
  __m512 d0 = _mm512_setzero_ps(), d1 = _mm512_setzero_ps();
  __m512 na0 = _mm512_setzero_ps(), na1 = _mm512_setzero_ps();
  __m512 nb0 = _mm512_setzero_ps(), nb1 = _mm512_setzero_ps();
  std::size_t i = 0;
  for (; i + 64 <= dim; i += 64) {
    const __m512bh x0 = LoadBh(a + i), y0 = LoadBh(b + i);
    const __m512bh x1 = LoadBh(a + i + 32), y1 = LoadBh(b + i + 32);
    d0 = _mm512_dpbf16_ps(d0, x0, y0);
    na0 = _mm512_dpbf16_ps(na0, x0, x0);
    nb0 = _mm512_dpbf16_ps(nb0, y0, y0);
    d1 = _mm512_dpbf16_ps(d1, x1, y1);
    na1 = _mm512_dpbf16_ps(na1, x1, x1);
    nb1 = _mm512_dpbf16_ps(nb1, y1, y1);
  }
  if (i + 32 <= dim) {
    const __m512bh x = LoadBh(a + i), y = LoadBh(b + i);
    d0 = _mm512_dpbf16_ps(d0, x, y);
    na0 = _mm512_dpbf16_ps(na0, x, x);
    nb0 = _mm512_dpbf16_ps(nb0, y, y);
    i += 32;
  }
  if (i < dim) {
    const __mmask32 m = Mask32(dim - i);
    const __m512bh x = LoadBhMasked(a + i, m), y = LoadBhMasked(b + i, m);
    d1 = _mm512_dpbf16_ps(d1, x, y);
    na1 = _mm512_dpbf16_ps(na1, x, x);
    nb1 = _mm512_dpbf16_ps(nb1, y, y);
  }
  return {_mm512_reduce_add_ps(_mm512_add_ps(d0, d1)),
          _mm512_reduce_add_ps(_mm512_add_ps(na0, na1)),
          _mm512_reduce_add_ps(_mm512_add_ps(nb0, nb1))};
}

// ---------------------------------------------------------------------------
// Exact integer kernels over one block of n <= kIntChunk bytes. Masked tail
// loads fill with zero bytes, which add nothing to any sum below (after a
// sign flip both operands' pads are 0x80 and their difference stays 0; in
// the VNNI forms the pad meets a zero in the other factor or in the sum).

inline __m512i SignFlip(__m512i v) {
  return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
}
inline __m512i LoadBytes(const std::uint8_t* p) { return _mm512_loadu_si512(p); }
inline __m512i LoadBytesMasked(const std::uint8_t* p, std::size_t n) {
  return _mm512_maskz_loadu_epi8(Mask64(n), p);
}

// acc_lo/acc_hi += squares of |x - y| over 64 (sign-flipped for int8) bytes.
inline void AccumulateSquaredDiff(__m512i x, __m512i y, __m512i* acc_lo, __m512i* acc_hi) {
  const __m512i ad = _mm512_or_si512(_mm512_subs_epu8(x, y), _mm512_subs_epu8(y, x));
  const __m512i lo = _mm512_unpacklo_epi8(ad, _mm512_setzero_si512());
  const __m512i hi = _mm512_unpackhi_epi8(ad, _mm512_setzero_si512());
  *acc_lo = _mm512_dpwssd_epi32(*acc_lo, lo, lo);
  *acc_hi = _mm512_dpwssd_epi32(*acc_hi, hi, hi);
}

template <bool kSigned>
std::int64_t L2BytesBlock(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  const auto prep = [](__m512i v) { return kSigned ? SignFlip(v) : v; };
  __m512i acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
  __m512i acc2 = _mm512_setzero_si512(), acc3 = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    AccumulateSquaredDiff(prep(LoadBytes(a + i)), prep(LoadBytes(b + i)), &acc0, &acc1);
    AccumulateSquaredDiff(prep(LoadBytes(a + i + 64)), prep(LoadBytes(b + i + 64)), &acc2, &acc3);
  }
  if (i + 64 <= n) {
    AccumulateSquaredDiff(prep(LoadBytes(a + i)), prep(LoadBytes(b + i)), &acc0, &acc1);
    i += 64;
  }
  if (i < n) {
    AccumulateSquaredDiff(prep(LoadBytesMasked(a + i, n - i)), prep(LoadBytesMasked(b + i, n - i)),
                          &acc2, &acc3);
  }
  return _mm512_reduce_add_epi32(
      _mm512_add_epi32(_mm512_add_epi32(acc0, acc1), _mm512_add_epi32(acc2, acc3)));
}

// One step of the VNNI dot product: dot += u*s over 64 bytes (u unsigned, s
// signed after biasing) and sum += the byte sum that removes the bias.
//   uint8: u = a, s = b ^ 0x80 (= b - 128), sum over a.
//   int8:  u = a ^ 0x80 (= a + 128), s = b, sum over b.
template <bool kSigned>
inline void AccumulateDot(__m512i a, __m512i b, __m512i* dot, __m512i* sum) {
  if (kSigned) {
    *dot = _mm512_dpbusd_epi32(*dot, SignFlip(a), b);
    *sum = _mm512_dpbusd_epi32(*sum, _mm512_set1_epi8(1), b);
  } else {
    *dot = _mm512_dpbusd_epi32(*dot, a, SignFlip(b));
    *sum = _mm512_dpbusd_epi32(*sum, a, _mm512_set1_epi8(1));
  }
}

// sum over lanes of (dot -+ 128 * bias sum). Removing the bias lane-wise
// before the one horizontal sum cannot overflow: within a kIntChunk block a
// lane sees at most 1024 bytes, so |dot| <= 1024 * 255 * 128 and
// 128 * |sum| <= 1024 * 255 * 128, and the true total is below 2^31.
template <bool kSigned>
inline std::int64_t Unbias(__m512i dot, __m512i sum) {
  const __m512i bias = _mm512_slli_epi32(sum, 7);
  return _mm512_reduce_add_epi32(kSigned ? _mm512_sub_epi32(dot, bias)
                                         : _mm512_add_epi32(dot, bias));
}

template <bool kSigned>
std::int64_t IpBytesBlock(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  __m512i dot0 = _mm512_setzero_si512(), dot1 = _mm512_setzero_si512();
  __m512i sum0 = _mm512_setzero_si512(), sum1 = _mm512_setzero_si512();
  std::size_t i = 0;
  for (; i + 128 <= n; i += 128) {
    AccumulateDot<kSigned>(LoadBytes(a + i), LoadBytes(b + i), &dot0, &sum0);
    AccumulateDot<kSigned>(LoadBytes(a + i + 64), LoadBytes(b + i + 64), &dot1, &sum1);
  }
  if (i + 64 <= n) {
    AccumulateDot<kSigned>(LoadBytes(a + i), LoadBytes(b + i), &dot0, &sum0);
    i += 64;
  }
  if (i < n) {
    AccumulateDot<kSigned>(LoadBytesMasked(a + i, n - i), LoadBytesMasked(b + i, n - i), &dot1,
                           &sum1);
  }
  return Unbias<kSigned>(_mm512_add_epi32(dot0, dot1), _mm512_add_epi32(sum0, sum1));
}

struct IntCos {
  std::int64_t dot = 0, na = 0, nb = 0;
};

// Cosine parts over 64 bytes: the biased products a.b, a.a, b.b plus the byte
// sums of a and b that remove the bias (see AccumulateDot).
struct CosAcc {
  __m512i dot = _mm512_setzero_si512(), na = _mm512_setzero_si512(), nb = _mm512_setzero_si512();
  __m512i sum_a = _mm512_setzero_si512(), sum_b = _mm512_setzero_si512();
};

template <bool kSigned>
inline void AccumulateCos(__m512i a, __m512i b, CosAcc* c) {
  const __m512i ones = _mm512_set1_epi8(1);
  const __m512i fa = SignFlip(a), fb = SignFlip(b);
  if (kSigned) {
    c->dot = _mm512_dpbusd_epi32(c->dot, fa, b);
    c->na = _mm512_dpbusd_epi32(c->na, fa, a);
    c->nb = _mm512_dpbusd_epi32(c->nb, fb, b);
    c->sum_a = _mm512_dpbusd_epi32(c->sum_a, ones, a);
    c->sum_b = _mm512_dpbusd_epi32(c->sum_b, ones, b);
  } else {
    c->dot = _mm512_dpbusd_epi32(c->dot, a, fb);
    c->na = _mm512_dpbusd_epi32(c->na, a, fa);
    c->nb = _mm512_dpbusd_epi32(c->nb, b, fb);
    c->sum_a = _mm512_dpbusd_epi32(c->sum_a, a, ones);
    c->sum_b = _mm512_dpbusd_epi32(c->sum_b, b, ones);
  }
}

template <bool kSigned>
IntCos CosBytesBlock(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  CosAcc c;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) AccumulateCos<kSigned>(LoadBytes(a + i), LoadBytes(b + i), &c);
  if (i < n) {
    AccumulateCos<kSigned>(LoadBytesMasked(a + i, n - i), LoadBytesMasked(b + i, n - i), &c);
  }
  // uint8: x.y = biased + 128 * sum(x); int8: x.y = biased - 128 * sum(y).
  return {Unbias<kSigned>(c.dot, kSigned ? c.sum_b : c.sum_a), Unbias<kSigned>(c.na, c.sum_a),
          Unbias<kSigned>(c.nb, c.sum_b)};
}

// Splits dim into kIntChunk blocks so int32 lanes never overflow.
template <typename T, std::int64_t (*kBlock)(const std::uint8_t*, const std::uint8_t*, std::size_t)>
float IntKernel(const T* a, const T* b, std::size_t dim) {
  const auto* pa = reinterpret_cast<const std::uint8_t*>(a);
  const auto* pb = reinterpret_cast<const std::uint8_t*>(b);
  std::int64_t total = 0;
  for (std::size_t i = 0; i < dim; i += kIntChunk) {
    total += kBlock(pa + i, pb + i, dim - i < kIntChunk ? dim - i : kIntChunk);
  }
  return static_cast<float>(total);
}

template <typename T, bool kSigned>
CosParts CosInt(const T* a, const T* b, std::size_t dim) {
  const auto* pa = reinterpret_cast<const std::uint8_t*>(a);
  const auto* pb = reinterpret_cast<const std::uint8_t*>(b);
  IntCos total;
  for (std::size_t i = 0; i < dim; i += kIntChunk) {
    const IntCos c =
        CosBytesBlock<kSigned>(pa + i, pb + i, dim - i < kIntChunk ? dim - i : kIntChunk);
    total.dot += c.dot;
    total.na += c.na;
    total.nb += c.nb;
  }
  return {static_cast<double>(total.dot), static_cast<double>(total.na),
          static_cast<double>(total.nb)};
}

struct Impl {
  static constexpr auto L2F32 = &L2Float<F32, F32>;
  static constexpr auto IpF32 = &IpFloat<F32, F32>;
  static constexpr auto CosF32 = &CosFloat<F32>;
  static constexpr auto L2F16 = &L2Float<F16, F16>;
  static constexpr auto IpF16 = &IpFloat<F16, F16>;
  static constexpr auto CosF16 = &CosFloat<F16>;
  static constexpr auto L2BF16 = &L2Float<BF16, BF16>;
  static constexpr auto IpBF16 = &IpBF16Dp;
  static constexpr auto CosBF16 = &CosBF16Dp;
  static constexpr auto L2U8 = &IntKernel<std::uint8_t, &L2BytesBlock<false>>;
  static constexpr auto IpU8 = &IntKernel<std::uint8_t, &IpBytesBlock<false>>;
  static constexpr auto CosU8 = &CosInt<std::uint8_t, false>;
  static constexpr auto L2I8 = &IntKernel<std::int8_t, &L2BytesBlock<true>>;
  static constexpr auto IpI8 = &IntKernel<std::int8_t, &IpBytesBlock<true>>;
  static constexpr auto CosI8 = &CosInt<std::int8_t, true>;
  static constexpr auto L2F32U8 = &L2Float<F32, U8>;
  static constexpr auto IpF32U8 = &IpFloat<F32, U8>;
  static constexpr auto L2F32I8 = &L2Float<F32, I8>;
  static constexpr auto IpF32I8 = &IpFloat<F32, I8>;
  static constexpr auto L2F32F16 = &L2Float<F32, F16>;
  static constexpr auto IpF32F16 = &IpFloat<F32, F16>;
  static constexpr auto L2F32BF16 = &L2Float<F32, BF16>;
  static constexpr auto IpF32BF16 = &IpFloat<F32, BF16>;
};

constexpr DistanceKernels kAvx512Table = MakeKernelTable<Impl>(Isa::kAvx512);

}  // namespace

const DistanceKernels* Avx512KernelTable() { return &kAvx512Table; }

}  // namespace strata::kernels
