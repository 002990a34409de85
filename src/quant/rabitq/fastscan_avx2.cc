// AVX2 FastScan kernel (compiled with the AVX2 flags only; see
// cmake/StrataSimd.cmake).
//
// One iteration handles a table pair: 32 code bytes whose 128-bit halves are
// tables 2p and 2p+1, looked up with vpshufb in the matching 32 LUT bytes.
// The low nibbles give slots pi(m), the high nibbles slots pi(m) + 16. Each
// result byte is summed into 16-bit lanes two ways: the lane as a whole
// (even byte + 256 * odd byte, mod 2^16) and the lane shifted right by 8 (odd
// byte alone); the even-byte sum is the difference. With pi, even bytes are
// slots 0-7 and odd bytes slots 8-15, so no shuffle is needed at the end.
// A lane sums at most 256 entries of <= 255 per segment, below 2^16, so the
// modular arithmetic is exact; segments are widened into 32-bit totals.
#include <immintrin.h>

#include <algorithm>

#include "quant/rabitq/fastscan_isa.h"

namespace strata::quant::rabitq {
namespace {

// Zero-extends the 8 u16 of each 128-bit half of v and adds the halves:
// result lane k = v.u16[k] + v.u16[8 + k] as u32.
inline __m256i SumHalves(__m256i v) {
  const __m256i lo = _mm256_cvtepu16_epi32(_mm256_castsi256_si128(v));
  const __m256i hi = _mm256_cvtepu16_epi32(_mm256_extracti128_si256(v, 1));
  return _mm256_add_epi32(lo, hi);
}

}  // namespace

void FastScanAccumulateAvx2(const std::uint8_t* codes, const std::uint8_t* lut,
                            std::size_t num_tables, std::uint32_t* out) {
  const __m256i nibble = _mm256_set1_epi8(0x0F);
  __m256i total[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(),
                      _mm256_setzero_si256()};
  const std::size_t pairs = num_tables / 2;
  constexpr std::size_t kSegment = 256;  // pairs per 16-bit segment
  for (std::size_t begin = 0; begin < pairs; begin += kSegment) {
    const std::size_t end = std::min(pairs, begin + kSegment);
    __m256i lo_all = _mm256_setzero_si256();
    __m256i lo_odd = _mm256_setzero_si256();
    __m256i hi_all = _mm256_setzero_si256();
    __m256i hi_odd = _mm256_setzero_si256();
    for (std::size_t p = begin; p < end; ++p) {
      const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + 32 * p));
      const __m256i table = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lut + 32 * p));
      const __m256i lo = _mm256_and_si256(c, nibble);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble);
      const __m256i rlo = _mm256_shuffle_epi8(table, lo);
      const __m256i rhi = _mm256_shuffle_epi8(table, hi);
      lo_all = _mm256_add_epi16(lo_all, rlo);
      lo_odd = _mm256_add_epi16(lo_odd, _mm256_srli_epi16(rlo, 8));
      hi_all = _mm256_add_epi16(hi_all, rhi);
      hi_odd = _mm256_add_epi16(hi_odd, _mm256_srli_epi16(rhi, 8));
    }
    const __m256i lo_even = _mm256_sub_epi16(lo_all, _mm256_slli_epi16(lo_odd, 8));
    const __m256i hi_even = _mm256_sub_epi16(hi_all, _mm256_slli_epi16(hi_odd, 8));
    total[0] = _mm256_add_epi32(total[0], SumHalves(lo_even));  // slots 0-7
    total[1] = _mm256_add_epi32(total[1], SumHalves(lo_odd));   // slots 8-15
    total[2] = _mm256_add_epi32(total[2], SumHalves(hi_even));  // slots 16-23
    total[3] = _mm256_add_epi32(total[3], SumHalves(hi_odd));   // slots 24-31
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * i), total[i]);
  }
}

}  // namespace strata::quant::rabitq
