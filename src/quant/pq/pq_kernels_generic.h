// Portable loop bodies of the PqKernels entries. Included by each ISA
// translation unit (functions in an anonymous namespace: internal linkage, so
// each TU's copy is compiled with that TU's ISA flags and auto-vectorised for
// it) and used as-is by the scalar table. Not a public header.
#ifndef STRATA_QUANT_PQ_PQ_KERNELS_GENERIC_H_
#define STRATA_QUANT_PQ_PQ_KERNELS_GENERIC_H_

#include <cstddef>
#include <cstdint>

#include "quant/pq/pq_kernels.h"

namespace strata::quant {
namespace {

[[maybe_unused]] void ArgminUpdateGeneric(const float* tile, std::size_t ld, std::size_t rows,
                                          std::size_t cols, const float* norms,
                                          std::uint32_t base, float* best,
                                          std::uint32_t* best_label) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* t = tile + r * ld;
    float b = best[r];
    std::uint32_t bl = best_label[r];
    for (std::size_t j = 0; j < cols; ++j) {
      const float v = t[j] + norms[j];
      if (v < b) {
        b = v;
        bl = base + static_cast<std::uint32_t>(j);
      }
    }
    best[r] = b;
    best_label[r] = bl;
  }
}

// Four independent accumulators: the adds of consecutive subspaces do not wait
// on each other (measured as a real win over one running sum in DefraDB's
// DISKANN vector index).
[[maybe_unused]] inline float AdcOneGeneric(const float* table, std::size_t m,
                                            const std::uint8_t* code) {
  float a0 = 0.f, a1 = 0.f, a2 = 0.f, a3 = 0.f;
  std::size_t j = 0;
  const float* t = table;
  for (; j + 4 <= m; j += 4, t += 4 * kPqCentroids) {
    a0 += t[code[j]];
    a1 += t[kPqCentroids + code[j + 1]];
    a2 += t[2 * kPqCentroids + code[j + 2]];
    a3 += t[3 * kPqCentroids + code[j + 3]];
  }
  for (; j < m; ++j, t += kPqCentroids) a0 += t[code[j]];
  return (a0 + a1) + (a2 + a3);
}

// Batch form: one code at a time. Measured on AMD EPYC (Zen 4) against
// variants that (a) gather 8/16 table entries per AVX2/AVX-512 instruction,
// (b) read codes 8 bytes per load with two codes interleaved, (c) score the
// batch in 16-subspace blocks to keep tables in L1: none was faster, (a) was
// 1.5-2x slower (bench/results/quant_pq.md).
[[maybe_unused]] void AdcBatchGeneric(const float* table, std::size_t m,
                                      const std::uint8_t* codes, std::size_t n, float bias,
                                      float* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = bias + AdcOneGeneric(table, m, codes + i * m);
}

[[maybe_unused]] void L2TableGeneric(const float* q, const float* ct, std::size_t dsub,
                                     float* out) {
  for (std::size_t c = 0; c < kPqCentroids; ++c) out[c] = 0.f;
  for (std::size_t i = 0; i < dsub; ++i) {
    const float qi = q[i];
    const float* row = ct + i * kPqCentroids;
    for (std::size_t c = 0; c < kPqCentroids; ++c) {
      const float diff = qi - row[c];
      out[c] += diff * diff;
    }
  }
}

[[maybe_unused]] void IpTableGeneric(const float* q, const float* ct, std::size_t dsub,
                                     float* out) {
  for (std::size_t c = 0; c < kPqCentroids; ++c) out[c] = 0.f;
  for (std::size_t i = 0; i < dsub; ++i) {
    const float qi = q[i];
    const float* row = ct + i * kPqCentroids;
    for (std::size_t c = 0; c < kPqCentroids; ++c) out[c] -= qi * row[c];
  }
}

}  // namespace
}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_PQ_KERNELS_GENERIC_H_
