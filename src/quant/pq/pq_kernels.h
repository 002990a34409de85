// Per-ISA inner loops of the k-means / PQ code: the arg-min pass of the
// nearest-centroid search, ADC table look-up sums, and ADC table construction.
//
// Each ISA's table lives in its own translation unit compiled with that ISA's
// flags only (pq_kernels_avx2.cc, pq_kernels_avx512.cc); the scalar table is
// the reference every other one is tested against. Pure functions:
// thread-safe.
#ifndef STRATA_QUANT_PQ_PQ_KERNELS_H_
#define STRATA_QUANT_PQ_PQ_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"

namespace strata::quant {

// Entries per PQ subspace table: 8-bit codes.
inline constexpr std::size_t kPqCentroids = 256;

struct PqKernels {
  kernels::Isa isa = kernels::Isa::kScalar;

  // For each row r < rows of `tile` (row stride ld, `cols` values), with
  // v_j = tile[r * ld + j] + norms[j]: if min_j v_j < best[r], sets best[r]
  // to it and best_label[r] = base + (first j reaching the minimum).
  void (*argmin_update)(const float* tile, std::size_t ld, std::size_t rows, std::size_t cols,
                        const float* norms, std::uint32_t base, float* best,
                        std::uint32_t* best_label) = nullptr;

  // ADC: sum over j < m of table[j * 256 + code[j]] (table: m x 256 floats).
  float (*adc_one)(const float* table, std::size_t m, const std::uint8_t* code) = nullptr;
  // ADC over n codes stored contiguously (codes: n x m bytes):
  // out[i] = bias + adc_one(table, m, codes + i * m).
  void (*adc_batch)(const float* table, std::size_t m, const std::uint8_t* codes,
                    std::size_t n, float bias, float* out) = nullptr;

  // One subspace's ADC table from the query slice q (size dsub) and the
  // subspace codebook transposed (ct: dsub x 256, ct[i * 256 + c] = coordinate
  // i of centroid c):
  //   l2_table: out[c] = sum_i (q[i] - ct[i * 256 + c])^2
  //   ip_table: out[c] = -sum_i q[i] * ct[i * 256 + c]
  void (*l2_table)(const float* q, const float* ct, std::size_t dsub, float* out) = nullptr;
  void (*ip_table)(const float* q, const float* ct, std::size_t dsub, float* out) = nullptr;
};

// The table for `isa`, or nullptr if that ISA is not compiled in or this CPU
// does not support it.
const PqKernels* GetPqKernels(kernels::Isa isa);
// The table for kernels::DetectIsa() (honours STRATA_ISA); never null.
const PqKernels& BestPqKernels();

// Per-ISA tables (defined in the ISA translation units; callers use
// GetPqKernels, which checks CPU support first).
const PqKernels& ScalarPqKernels();
const PqKernels* Avx2PqKernels();
const PqKernels* Avx512PqKernels();

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_PQ_KERNELS_H_
