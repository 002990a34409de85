// ADC (asymmetric distance computation) look-ups over PQ codes.
//
// With a per-query PqDistanceTable (ProductQuantizer::ComputeDistanceTable),
// the distance of an m-byte code is table.bias + sum_j values[j*256+code[j]]:
// m dependent-free loads and adds. The kernels (pq_kernels_*.cc) gather 8
// (AVX2) or 16 (AVX-512) subspaces per instruction into four independent
// accumulators; the scalar reference also keeps four accumulators. The ISA is
// chosen once (kernels::DetectIsa, honours STRATA_ISA).
//
// Thread-safe: read-only on the table and codes.
#ifndef STRATA_QUANT_PQ_PQ_ADC_H_
#define STRATA_QUANT_PQ_PQ_ADC_H_

#include <cstddef>
#include <cstdint>

#include "quant/pq/product_quantizer.h"

namespace strata::quant {

// Distance of one code (table.m bytes) to the table's query.
float ComputeDistance(const PqDistanceTable& table, const std::uint8_t* code);

// Distances of n codes stored back to back (n * table.m bytes) into out
// (n floats). Codes need no alignment.
void ComputeDistances(const PqDistanceTable& table, const std::uint8_t* codes, std::size_t n,
                      float* out);

// Same with an explicit kernel table (tests, benchmarks comparing ISAs).
void ComputeDistances(const PqKernels& kernels, const PqDistanceTable& table,
                      const std::uint8_t* codes, std::size_t n, float* out);

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_PQ_ADC_H_
