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

// Gathers 8 subspaces' entries per instruction: lane l reads
// table[(j + l) * 256 + code[j + l]]; four accumulators as in the scalar loop.
inline float AdcOneAvx2(const float* table, std::size_t m, const std::uint8_t* code) {
  const __m256i lane = _mm256_setr_epi32(0, 256, 512, 768, 1024, 1280, 1536, 1792);
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  std::size_t j = 0;
  for (; j + 32 <= m; j += 32) {
    const __m256i x0 = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(code + j)));
    const __m256i x1 = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(code + j + 8)));
    const __m256i x2 = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(code + j + 16)));
    const __m256i x3 = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(code + j + 24)));
    const float* t = table + j * kPqCentroids;
    a0 = _mm256_add_ps(a0, _mm256_i32gather_ps(t, _mm256_add_epi32(x0, lane), 4));
    a1 = _mm256_add_ps(a1, _mm256_i32gather_ps(t + 8 * kPqCentroids,
                                                _mm256_add_epi32(x1, lane), 4));
    a2 = _mm256_add_ps(a2, _mm256_i32gather_ps(t + 16 * kPqCentroids,
                                                _mm256_add_epi32(x2, lane), 4));
    a3 = _mm256_add_ps(a3, _mm256_i32gather_ps(t + 24 * kPqCentroids,
                                                _mm256_add_epi32(x3, lane), 4));
  }
  for (; j + 8 <= m; j += 8) {
    const __m256i x = _mm256_cvtepu8_epi32(
        _mm_loadl_epi64(reinterpret_cast<const __m128i*>(code + j)));
    a0 = _mm256_add_ps(
        a0, _mm256_i32gather_ps(table + j * kPqCentroids, _mm256_add_epi32(x, lane), 4));
  }
  const __m256 s = _mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3));
  __m128 h = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
  h = _mm_add_ps(h, _mm_movehl_ps(h, h));
  h = _mm_add_ss(h, _mm_movehdup_ps(h));
  float sum = _mm_cvtss_f32(h);
  for (; j < m; ++j) sum += table[j * kPqCentroids + code[j]];
  return sum;
}

void AdcBatchAvx2(const float* table, std::size_t m, const std::uint8_t* codes, std::size_t n,
                  float bias, float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = bias + AdcOneAvx2(table, m, codes + i * m);
}

}  // namespace

const PqKernels* Avx2PqKernels() {
  static const PqKernels k = [] {
    PqKernels t;
    t.isa = kernels::Isa::kAvx2;
    t.argmin_update = &ArgminUpdateAvx2;
    t.adc_one = &AdcOneAvx2;
    t.adc_batch = &AdcBatchAvx2;
    t.l2_table = &L2TableGeneric;
    t.ip_table = &IpTableGeneric;
    return t;
  }();
  return &k;
}

}  // namespace strata::quant
