// AVX-512 (BW) FastScan kernel: the AVX2 scheme (fastscan_avx2.cc) on four
// tables per iteration, one per 128-bit lane. A lane still sums one entry
// per iteration, so a segment of 256 iterations stays below 2^16.
#include <immintrin.h>

#include <algorithm>

#include "quant/rabitq/fastscan_isa.h"

namespace strata::quant::rabitq {
namespace {

// Result lane k (k < 8) = sum over the four 128-bit lanes j of v.u16[8j + k],
// as u32.
// (The maskz forms with a full mask are the plain instructions; GCC 12's
// unmasked extract/convert/cast intrinsics trip -Wmaybe-uninitialized on their undefined source.)
inline __m256i Half(__m512i v, int which) {
  return which == 0 ? _mm512_maskz_extracti64x4_epi64(0xFF, v, 0)
                    : _mm512_maskz_extracti64x4_epi64(0xFF, v, 1);
}
inline __m256i SumLanes(__m512i v) {
  const __m512i lo = _mm512_maskz_cvtepu16_epi32(0xFFFF, Half(v, 0));  // lanes 0, 1
  const __m512i hi = _mm512_maskz_cvtepu16_epi32(0xFFFF, Half(v, 1));  // lanes 2, 3
  const __m512i sum = _mm512_add_epi32(lo, hi);
  return _mm256_add_epi32(Half(sum, 0), Half(sum, 1));
}

}  // namespace

void FastScanAccumulateAvx512(const std::uint8_t* codes, const std::uint8_t* lut,
                              std::size_t num_tables, std::uint32_t* out) {
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  __m256i total[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
  const std::size_t quads = num_tables / 4;  // num_tables is a multiple of 16
  constexpr std::size_t kSegment = 256;      // iterations per 16-bit segment
  for (std::size_t begin = 0; begin < quads; begin += kSegment) {
    const std::size_t end = std::min(quads, begin + kSegment);
    __m512i lo_all = _mm512_setzero_si512();
    __m512i lo_odd = _mm512_setzero_si512();
    __m512i hi_all = _mm512_setzero_si512();
    __m512i hi_odd = _mm512_setzero_si512();
    for (std::size_t i = begin; i < end; ++i) {
      const __m512i c = _mm512_loadu_si512(codes + 64 * i);
      const __m512i table = _mm512_loadu_si512(lut + 64 * i);
      const __m512i lo = _mm512_and_si512(c, nibble);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(c, 4), nibble);
      const __m512i rlo = _mm512_shuffle_epi8(table, lo);
      const __m512i rhi = _mm512_shuffle_epi8(table, hi);
      lo_all = _mm512_add_epi16(lo_all, rlo);
      lo_odd = _mm512_add_epi16(lo_odd, _mm512_srli_epi16(rlo, 8));
      hi_all = _mm512_add_epi16(hi_all, rhi);
      hi_odd = _mm512_add_epi16(hi_odd, _mm512_srli_epi16(rhi, 8));
    }
    const __m512i lo_even = _mm512_sub_epi16(lo_all, _mm512_slli_epi16(lo_odd, 8));
    const __m512i hi_even = _mm512_sub_epi16(hi_all, _mm512_slli_epi16(hi_odd, 8));
    total[0] = _mm256_add_epi32(total[0], SumLanes(lo_even));  // slots 0-7
    total[1] = _mm256_add_epi32(total[1], SumLanes(lo_odd));   // slots 8-15
    total[2] = _mm256_add_epi32(total[2], SumLanes(hi_even));  // slots 16-23
    total[3] = _mm256_add_epi32(total[3], SumLanes(hi_odd));   // slots 24-31
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * i), total[i]);
  }
}

}  // namespace strata::quant::rabitq
