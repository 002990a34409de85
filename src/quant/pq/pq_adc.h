// ADC (asymmetric distance computation) look-ups over PQ codes.
//
// With a per-query PqDistanceTable (ProductQuantizer::ComputeDistanceTable),
// the distance of an m-byte code is table.bias + sum_j values[j*256+code[j]]:
// m independent loads and adds, summed in four accumulators so consecutive
// adds do not wait on each other (a real win in DefraDB's DISKANN vector
// index). The loop is plain C++ compiled per ISA; AVX2/AVX-512 gather versions
// were measured 1.3-2.5x slower on AMD Zen 4 and dropped
// (bench/results/quant_pq.md). The ISA table is chosen once
// (kernels::DetectIsa, honours STRATA_ISA).
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
