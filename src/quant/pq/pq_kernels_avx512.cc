// AVX-512 (F/BW/VL) PqKernels (compiled with the AVX512 flags only).
//
// GCC 12's avx512fintrin.h builds reductions and conversions on
// _mm512_undefined_*(), which -Wall reports as "'__Y' is used uninitialized"
// at every call site: a known header false positive, silenced for this TU.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

#include <limits>

#include "quant/pq/pq_kernels.h"
#include "quant/pq/pq_kernels_generic.h"

namespace strata::quant {
namespace {

// See ArgminUpdateAvx2: two independent (min, index) pairs, masked tail, and a
// lowest-index tie-break that reproduces the scalar first minimum.
void ArgminUpdateAvx512(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                        const float* norms, std::uint32_t base, float* best,
                        std::uint32_t* best_label) {
  const __m512 vinf = _mm512_set1_ps(std::numeric_limits<float>::infinity());
  const __m512i step = _mm512_set1_epi32(32);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* t = tile + r * ld;
    __m512 m0 = vinf, m1 = vinf;
    __m512i i0 = _mm512_setzero_si512(), i1 = i0;
    __m512i c0 = iota, c1 = _mm512_add_epi32(iota, _mm512_set1_epi32(16));
    std::size_t j = 0;
    for (; j + 32 <= cols; j += 32) {
      const __m512 v0 = _mm512_add_ps(_mm512_loadu_ps(t + j), _mm512_loadu_ps(norms + j));
      const __m512 v1 =
          _mm512_add_ps(_mm512_loadu_ps(t + j + 16), _mm512_loadu_ps(norms + j + 16));
      const __mmask16 lt0 = _mm512_cmp_ps_mask(v0, m0, _CMP_LT_OQ);
      const __mmask16 lt1 = _mm512_cmp_ps_mask(v1, m1, _CMP_LT_OQ);
      m0 = _mm512_mask_mov_ps(m0, lt0, v0);
      m1 = _mm512_mask_mov_ps(m1, lt1, v1);
      i0 = _mm512_mask_mov_epi32(i0, lt0, c0);
      i1 = _mm512_mask_mov_epi32(i1, lt1, c1);
      c0 = _mm512_add_epi32(c0, step);
      c1 = _mm512_add_epi32(c1, step);
    }
    for (; j < cols; j += 16) {  // masked tail; masked-off lanes read as +inf
      const std::size_t left = cols - j;
      const __mmask16 mk =
          left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
      const __m512 v = _mm512_mask_add_ps(vinf, mk, _mm512_maskz_loadu_ps(mk, t + j),
                                          _mm512_maskz_loadu_ps(mk, norms + j));
      const __mmask16 lt = _mm512_cmp_ps_mask(v, m0, _CMP_LT_OQ);
      m0 = _mm512_mask_mov_ps(m0, lt, v);
      i0 = _mm512_mask_mov_epi32(
          i0, lt, _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<int>(j))));
    }
    // Merge the pairs: m1 wins a lane if smaller, or equal with a lower index.
    const __mmask16 take = _mm512_cmp_ps_mask(m1, m0, _CMP_LT_OQ) |
                           (_mm512_cmp_ps_mask(m1, m0, _CMP_EQ_OQ) &
                            _mm512_cmplt_epu32_mask(i1, i0));
    m0 = _mm512_mask_mov_ps(m0, take, m1);
    i0 = _mm512_mask_mov_epi32(i0, take, i1);
    const float b = _mm512_reduce_min_ps(m0);
    if (b < best[r]) {
      const __mmask16 at = _mm512_cmp_ps_mask(m0, _mm512_set1_ps(b), _CMP_EQ_OQ);
      best[r] = b;
      best_label[r] = base + static_cast<std::uint32_t>(_mm512_mask_reduce_min_epu32(at, i0));
    }
  }
}

}  // namespace

const PqKernels* Avx512PqKernels() {
  static const PqKernels k = [] {
    PqKernels t;
    t.isa = kernels::Isa::kAvx512;
    t.argmin_update = &ArgminUpdateAvx512;
    t.adc_one = &AdcOneGeneric;  // gathers measured slower (see generic)
    t.adc_batch = &AdcBatchGeneric;
    t.l2_table = &L2TableGeneric;
    t.ip_table = &IpTableGeneric;
    return t;
  }();
  return &k;
}

}  // namespace strata::quant
