// AVX2 + FMA + F16C kernels (compiled with STRATA_AVX2_FLAGS only; called
// only after dispatch.cc has checked the CPU and OS).
//
// Float kernels: 4 independent 8-wide FMA accumulators (32 elements per
// iteration) hide the FMA latency; half types are widened to float32 on load
// (F16C vcvtph2ps, or a 16-bit shift for bfloat16). Tails shorter than one
// vector are copied into a zeroed stack buffer, since AVX2 has no masked
// 8/16-bit loads; zero padding adds nothing to any sum.
//
// Integer kernels are exact: bytes are widened to int16 and multiplied with
// vpmaddwd into int32 lanes (|pair sum| <= 2 * 255^2), flushed to int64 every
// kIntChunk elements. Squared L2 uses |a - b| from two saturating
// subtractions, so one widening per byte instead of two; int8 is mapped to
// uint8 by flipping the sign bit, which preserves differences.
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"
#include "kernels/distance_isa.h"
#include "kernels/distance_table_inl.h"
#include "kernels/half_inl.h"

namespace strata::kernels {
namespace {

inline float HSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline std::int32_t HSumEpi32(__m256i v) {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// ---------------------------------------------------------------------------
// Float kernels. Loaders turn 8 stored elements into 8 float32 lanes.

struct F32 {
  using T = float;
  static __m256 Load(const float* p) { return _mm256_loadu_ps(p); }
};
struct F16 {
  using T = std::uint16_t;
  static __m256 Load(const std::uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
};
struct BF16 {
  using T = std::uint16_t;
  static __m256 Load(const std::uint16_t* p) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
};
struct U8 {
  using T = std::uint8_t;
  static __m256 Load(const std::uint8_t* p) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
};
struct I8 {
  using T = std::int8_t;
  static __m256 Load(const std::int8_t* p) {
    return _mm256_cvtepi32_ps(
        _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
  }
};

// Loads the last n < 8 elements, zero-padded, without reading past p + n.
template <class E>
inline __m256 LoadPartial(const typename E::T* p, std::size_t n) {
  typename E::T buf[8] = {};
  __builtin_memcpy(buf, p, n * sizeof(typename E::T));
  return E::Load(buf);
}

template <class A, class B>
float L2Float(const typename A::T* a, const typename B::T* b, std::size_t dim) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    const __m256 d0 = _mm256_sub_ps(A::Load(a + i), B::Load(b + i));
    const __m256 d1 = _mm256_sub_ps(A::Load(a + i + 8), B::Load(b + i + 8));
    const __m256 d2 = _mm256_sub_ps(A::Load(a + i + 16), B::Load(b + i + 16));
    const __m256 d3 = _mm256_sub_ps(A::Load(a + i + 24), B::Load(b + i + 24));
    s0 = _mm256_fmadd_ps(d0, d0, s0);
    s1 = _mm256_fmadd_ps(d1, d1, s1);
    s2 = _mm256_fmadd_ps(d2, d2, s2);
    s3 = _mm256_fmadd_ps(d3, d3, s3);
  }
  for (; i + 8 <= dim; i += 8) {
    const __m256 d = _mm256_sub_ps(A::Load(a + i), B::Load(b + i));
    s0 = _mm256_fmadd_ps(d, d, s0);
  }
  if (i < dim) {
    const __m256 d = _mm256_sub_ps(LoadPartial<A>(a + i, dim - i), LoadPartial<B>(b + i, dim - i));
    s1 = _mm256_fmadd_ps(d, d, s1);
  }
  return HSum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

template <class A, class B>
float IpFloat(const typename A::T* a, const typename B::T* b, std::size_t dim) {
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 32 <= dim; i += 32) {
    s0 = _mm256_fmadd_ps(A::Load(a + i), B::Load(b + i), s0);
    s1 = _mm256_fmadd_ps(A::Load(a + i + 8), B::Load(b + i + 8), s1);
    s2 = _mm256_fmadd_ps(A::Load(a + i + 16), B::Load(b + i + 16), s2);
    s3 = _mm256_fmadd_ps(A::Load(a + i + 24), B::Load(b + i + 24), s3);
  }
  for (; i + 8 <= dim; i += 8) s0 = _mm256_fmadd_ps(A::Load(a + i), B::Load(b + i), s0);
  if (i < dim) {
    s1 = _mm256_fmadd_ps(LoadPartial<A>(a + i, dim - i), LoadPartial<B>(b + i, dim - i), s1);
  }
  return HSum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

template <class E>
CosParts CosFloat(const typename E::T* a, const typename E::T* b, std::size_t dim) {
  __m256 d0 = _mm256_setzero_ps(), d1 = _mm256_setzero_ps();
  __m256 na0 = _mm256_setzero_ps(), na1 = _mm256_setzero_ps();
  __m256 nb0 = _mm256_setzero_ps(), nb1 = _mm256_setzero_ps();
  std::size_t i = 0;
  for (; i + 16 <= dim; i += 16) {
    const __m256 x0 = E::Load(a + i), y0 = E::Load(b + i);
    const __m256 x1 = E::Load(a + i + 8), y1 = E::Load(b + i + 8);
    d0 = _mm256_fmadd_ps(x0, y0, d0);
    na0 = _mm256_fmadd_ps(x0, x0, na0);
    nb0 = _mm256_fmadd_ps(y0, y0, nb0);
    d1 = _mm256_fmadd_ps(x1, y1, d1);
    na1 = _mm256_fmadd_ps(x1, x1, na1);
    nb1 = _mm256_fmadd_ps(y1, y1, nb1);
  }
  if (i + 8 <= dim) {
    const __m256 x = E::Load(a + i), y = E::Load(b + i);
    d0 = _mm256_fmadd_ps(x, y, d0);
    na0 = _mm256_fmadd_ps(x, x, na0);
    nb0 = _mm256_fmadd_ps(y, y, nb0);
    i += 8;
  }
  if (i < dim) {
    const __m256 x = LoadPartial<E>(a + i, dim - i), y = LoadPartial<E>(b + i, dim - i);
    d1 = _mm256_fmadd_ps(x, y, d1);
    na1 = _mm256_fmadd_ps(x, x, na1);
    nb1 = _mm256_fmadd_ps(y, y, nb1);
  }
  return {HSum(_mm256_add_ps(d0, d1)), HSum(_mm256_add_ps(na0, na1)),
          HSum(_mm256_add_ps(nb0, nb1))};
}

// ---------------------------------------------------------------------------
// Exact integer kernels over one block of n <= kIntChunk bytes.

// Loads 32 bytes; for int8 (kSigned) flips the sign bit, mapping -128..127
// monotonically onto 0..255.
template <bool kSigned>
inline __m256i LoadBiased(const void* p) {
  const __m256i v = _mm256_loadu_si256(static_cast<const __m256i*>(p));
  return kSigned ? _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))) : v;
}

// Widens 32 bytes to two vectors of 16 int16 (the lane order differs from
// memory order, identically for both operands, which sums do not care about).
template <bool kSigned>
inline void Widen(__m256i v, __m256i* lo, __m256i* hi) {
  if (kSigned) {  // the byte lands in the high half of each word; shift it down with sign
    *lo = _mm256_srai_epi16(_mm256_unpacklo_epi8(v, v), 8);
    *hi = _mm256_srai_epi16(_mm256_unpackhi_epi8(v, v), 8);
  } else {
    *lo = _mm256_unpacklo_epi8(v, _mm256_setzero_si256());
    *hi = _mm256_unpackhi_epi8(v, _mm256_setzero_si256());
  }
}

// Sum of squared |x - y| over 32 bytes (already biased) into two int32 vectors.
inline void AccumulateSquaredDiff(__m256i x, __m256i y, __m256i* acc_lo, __m256i* acc_hi) {
  const __m256i ad = _mm256_or_si256(_mm256_subs_epu8(x, y), _mm256_subs_epu8(y, x));
  const __m256i lo = _mm256_unpacklo_epi8(ad, _mm256_setzero_si256());
  const __m256i hi = _mm256_unpackhi_epi8(ad, _mm256_setzero_si256());
  *acc_lo = _mm256_add_epi32(*acc_lo, _mm256_madd_epi16(lo, lo));
  *acc_hi = _mm256_add_epi32(*acc_hi, _mm256_madd_epi16(hi, hi));
}

// Copies the last n < 32 bytes into a zeroed buffer (padding adds 0 to every
// sum below, including after the int8 sign flip, which maps both pads alike).
struct Tail32 {
  alignas(32) std::uint8_t a[32] = {};
  alignas(32) std::uint8_t b[32] = {};
  Tail32(const std::uint8_t* pa, const std::uint8_t* pb, std::size_t n) {
    __builtin_memcpy(a, pa, n);
    __builtin_memcpy(b, pb, n);
  }
};

template <bool kSigned>
std::int64_t L2BytesBlock(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  __m256i acc2 = _mm256_setzero_si256(), acc3 = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    AccumulateSquaredDiff(LoadBiased<kSigned>(a + i), LoadBiased<kSigned>(b + i), &acc0, &acc1);
    AccumulateSquaredDiff(LoadBiased<kSigned>(a + i + 32), LoadBiased<kSigned>(b + i + 32), &acc2,
                          &acc3);
  }
  if (i + 32 <= n) {
    AccumulateSquaredDiff(LoadBiased<kSigned>(a + i), LoadBiased<kSigned>(b + i), &acc0, &acc1);
    i += 32;
  }
  if (i < n) {
    const Tail32 t(a + i, b + i, n - i);
    AccumulateSquaredDiff(LoadBiased<kSigned>(t.a), LoadBiased<kSigned>(t.b), &acc2, &acc3);
  }
  return HSumEpi32(_mm256_add_epi32(_mm256_add_epi32(acc0, acc1), _mm256_add_epi32(acc2, acc3)));
}

template <bool kSigned>
inline void AccumulateDot(const void* pa, const void* pb, __m256i* acc_lo, __m256i* acc_hi) {
  __m256i xl, xh, yl, yh;
  Widen<kSigned>(_mm256_loadu_si256(static_cast<const __m256i*>(pa)), &xl, &xh);
  Widen<kSigned>(_mm256_loadu_si256(static_cast<const __m256i*>(pb)), &yl, &yh);
  *acc_lo = _mm256_add_epi32(*acc_lo, _mm256_madd_epi16(xl, yl));
  *acc_hi = _mm256_add_epi32(*acc_hi, _mm256_madd_epi16(xh, yh));
}

template <bool kSigned>
std::int64_t IpBytesBlock(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  __m256i acc2 = _mm256_setzero_si256(), acc3 = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    AccumulateDot<kSigned>(a + i, b + i, &acc0, &acc1);
    AccumulateDot<kSigned>(a + i + 32, b + i + 32, &acc2, &acc3);
  }
  if (i + 32 <= n) {
    AccumulateDot<kSigned>(a + i, b + i, &acc0, &acc1);
    i += 32;
  }
  if (i < n) {
    const Tail32 t(a + i, b + i, n - i);
    AccumulateDot<kSigned>(t.a, t.b, &acc2, &acc3);
  }
  return HSumEpi32(_mm256_add_epi32(_mm256_add_epi32(acc0, acc1), _mm256_add_epi32(acc2, acc3)));
}

struct IntCos {
  std::int64_t dot = 0, na = 0, nb = 0;
};

template <bool kSigned>
inline void AccumulateCos(const void* pa, const void* pb, __m256i* dot, __m256i* na, __m256i* nb) {
  __m256i xl, xh, yl, yh;
  Widen<kSigned>(_mm256_loadu_si256(static_cast<const __m256i*>(pa)), &xl, &xh);
  Widen<kSigned>(_mm256_loadu_si256(static_cast<const __m256i*>(pb)), &yl, &yh);
  *dot = _mm256_add_epi32(*dot,
                          _mm256_add_epi32(_mm256_madd_epi16(xl, yl), _mm256_madd_epi16(xh, yh)));
  *na =
      _mm256_add_epi32(*na, _mm256_add_epi32(_mm256_madd_epi16(xl, xl), _mm256_madd_epi16(xh, xh)));
  *nb =
      _mm256_add_epi32(*nb, _mm256_add_epi32(_mm256_madd_epi16(yl, yl), _mm256_madd_epi16(yh, yh)));
}

template <bool kSigned>
IntCos CosBytesBlock(const std::uint8_t* a, const std::uint8_t* b, std::size_t n) {
  __m256i dot = _mm256_setzero_si256(), na = _mm256_setzero_si256(), nb = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) AccumulateCos<kSigned>(a + i, b + i, &dot, &na, &nb);
  if (i < n) {
    const Tail32 t(a + i, b + i, n - i);
    AccumulateCos<kSigned>(t.a, t.b, &dot, &na, &nb);
  }
  return {HSumEpi32(dot), HSumEpi32(na), HSumEpi32(nb)};
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
  static constexpr auto IpBF16 = &IpFloat<BF16, BF16>;
  static constexpr auto CosBF16 = &CosFloat<BF16>;
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

constexpr DistanceKernels kAvx2Table = MakeKernelTable<Impl>(Isa::kAvx2);

}  // namespace

const DistanceKernels* Avx2KernelTable() { return &kAvx2Table; }

// ---------------------------------------------------------------------------
// Bulk conversions (F16C for float16; integer rounding for bfloat16, which
// has no AVX2 instruction). Tails go through the scalar definitions.

void Avx2HalfToFloatN(const std::uint16_t* in, float* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, F16::Load(in + i));
  }
  for (; i < n; ++i) out[i] = HalfBitsToFloat(in[i]);
}

void Avx2FloatToHalfN(const float* in, std::uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  for (; i < n; ++i) out[i] = FloatToHalfBits(in[i]);
}

void Avx2BFloat16ToFloatN(const std::uint16_t* in, float* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, BF16::Load(in + i));
  for (; i < n; ++i) out[i] = BFloat16BitsToFloat(in[i]);
}

namespace {
// 8 floats -> 8 bfloat16 in the low 16 bits of each int32 lane, exactly as
// FloatToBFloat16Bits: round to nearest even, NaN -> quiet NaN.
inline __m256i RoundToBFloat16(__m256i x) {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
  const __m256i rounded =
      _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7FFF)), lsb), 16);
  const __m256i quiet_nan = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
  const __m256i abs = _mm256_and_si256(x, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i is_nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7F800000));
  return _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
}
}  // namespace

void Avx2FloatToBFloat16N(const float* in, std::uint16_t* out, std::size_t n) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i lo =
        RoundToBFloat16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i)));
    const __m256i hi =
        RoundToBFloat16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i + 8)));
    // packus works per 128-bit lane; the qword permute restores memory order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  for (; i < n; ++i) out[i] = FloatToBFloat16Bits(in[i]);
}

}  // namespace strata::kernels
