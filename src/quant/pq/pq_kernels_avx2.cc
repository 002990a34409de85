// AVX2 + FMA PqKernels (compiled with the AVX2 flags only; see StrataSimd).
#include <immintrin.h>

#include <limits>

#include "quant/pq/pq_kernels.h"
#include "quant/pq/pq_kernels_generic.h"

namespace strata::quant {
namespace {

// Two independent (min, index) vector pairs so consecutive compares do not
// serialise on one blend chain; merged with lowest-index tie-breaking, which
// reproduces the scalar "first minimum" exactly.
void ArgminUpdateAvx2(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                      const float* norms, std::uint32_t base, float* best,
                      std::uint32_t* best_label) {
  const float inf = std::numeric_limits<float>::infinity();
  const __m256i step = _mm256_set1_epi32(16);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* t = tile + r * ld;
    __m256 m0 = _mm256_set1_ps(inf), m1 = m0;
    __m256i i0 = _mm256_setzero_si256(), i1 = i0;
    __m256i c0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256i c1 = _mm256_add_epi32(c0, _mm256_set1_epi32(8));
    std::size_t j = 0;
    for (; j + 16 <= cols; j += 16) {
      const __m256 v0 = _mm256_add_ps(_mm256_loadu_ps(t + j), _mm256_loadu_ps(norms + j));
      const __m256 v1 =
          _mm256_add_ps(_mm256_loadu_ps(t + j + 8), _mm256_loadu_ps(norms + j + 8));
      const __m256 lt0 = _mm256_cmp_ps(v0, m0, _CMP_LT_OQ);
      const __m256 lt1 = _mm256_cmp_ps(v1, m1, _CMP_LT_OQ);
      m0 = _mm256_blendv_ps(m0, v0, lt0);
      m1 = _mm256_blendv_ps(m1, v1, lt1);
      i0 = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(i0), _mm256_castsi256_ps(c0), lt0));
      i1 = _mm256_castps_si256(
          _mm256_blendv_ps(_mm256_castsi256_ps(i1), _mm256_castsi256_ps(c1), lt1));
      c0 = _mm256_add_epi32(c0, step);
      c1 = _mm256_add_epi32(c1, step);
    }
    alignas(32) float mv[16];
    alignas(32) std::uint32_t iv[16];
    _mm256_store_ps(mv, m0);
    _mm256_store_ps(mv + 8, m1);
    _mm256_store_si256(reinterpret_cast<__m256i*>(iv), i0);
    _mm256_store_si256(reinterpret_cast<__m256i*>(iv + 8), i1);
    float b = inf;
    std::uint32_t bl = 0;
    for (int l = 0; l < 16; ++l) {
      if (mv[l] < b || (mv[l] == b && iv[l] < bl)) {
        b = mv[l];
        bl = iv[l];
      }
    }
    for (; j < cols; ++j) {  // tail: indices above every vector lane's
      const float v = t[j] + norms[j];
      if (v < b) {
        b = v;
        bl = static_cast<std::uint32_t>(j);
      }
    }
    if (b < best[r]) {
      best[r] = b;
      best_label[r] = base + bl;
    }
  }
}

}  // namespace

const PqKernels* Avx2PqKernels() {
  static const PqKernels k = [] {
    PqKernels t;
    t.isa = kernels::Isa::kAvx2;
    t.argmin_update = &ArgminUpdateAvx2;
    t.adc_one = &AdcOneGeneric;  // gathers measured slower (see generic)
    t.adc_batch = &AdcBatchGeneric;
    t.l2_table = &L2TableGeneric;
    t.ip_table = &IpTableGeneric;
    return t;
  }();
  return &k;
}

}  // namespace strata::quant
