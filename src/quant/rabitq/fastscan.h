// FastScan for RaBitQ: the sum <b, q> over a batch of 32 packed 1-bit codes,
// from 4-bit look-up tables held in SIMD registers (André et al., "Cache
// locality is not enough", VLDB 2015; the RaBitQ library's batch kernel).
//
// The query side is one table per 4 coordinates ("table t" covers coordinates
// 4t..4t+3): entry v (a 4-bit nibble, bit 3 <-> coordinate 4t) is the sum of
// the query coordinates whose bit is set in v. The tables are quantised to
// uint8 with a per-table offset and one shared step:
//     entry_t[v] = round((x_t[v] - lo_t) / delta)   (halves round up),
//     lo_t = min_v x_t[v],   delta = max_t (max_v x_t[v] - lo_t) / 255,
// so that for a code b,  <b, q>  ~=  delta * acc + sum_t lo_t  where acc is the
// exact integer sum of one entry per table (each table contributes exactly one
// entry, which is why a per-table offset costs nothing). The error is at most
// delta/2 per table. (This is the reference library's LUT quantisation; it
// replaces the original paper's 4-bit query quantisation, which would need
// each code's popcount as a fourth factor.)
//
// The kernels compute acc for the 32 slots of a RAM batch block (layout.h)
// exactly in integers: 8-bit entries are summed in 16-bit lanes over segments
// of at most 256 table pairs and widened to 32 bits between segments, so no
// dimension overflows. Every ISA returns bit-identical accumulators; the
// scalar version is the reference.
//
// Thread-safety: all functions are pure; the kernel table is immutable.
#ifndef STRATA_QUANT_RABITQ_FASTSCAN_H_
#define STRATA_QUANT_RABITQ_FASTSCAN_H_

#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"

namespace strata::quant::rabitq {

// acc[s] = sum_{t < num_tables} lut[16 t + nibble_t(slot s)] for the 32 slots.
//   codes:      the interleaved code part of a RAM batch block (num_tables * 8
//               bytes; layout.h), any alignment
//   lut:        num_tables * 16 quantised entries, table-major, any alignment
//   num_tables: a multiple of 16 (the prefix dim D_m is a multiple of 64)
//   out:        32 accumulators (overwritten)
using FastScanAccumulateFn = void (*)(const std::uint8_t* codes, const std::uint8_t* lut,
                                      std::size_t num_tables, std::uint32_t* out);

struct FastScanKernels {
  kernels::Isa isa = kernels::Isa::kScalar;
  FastScanAccumulateFn accumulate = nullptr;
};

// The table for `isa`, or nullptr if that ISA is not compiled in or this CPU
// cannot run it. Use it to test every ISA against the scalar reference.
const FastScanKernels* GetFastScanKernels(kernels::Isa isa);
// The best usable table, at most kernels::DetectIsa() (so STRATA_ISA caps it);
// resolved once, never null.
const FastScanKernels& BestFastScanKernels();

// The scalar reference kernel.
void FastScanAccumulateScalar(const std::uint8_t* codes, const std::uint8_t* lut,
                              std::size_t num_tables, std::uint32_t* out);

// Float tables for the first 4 * num_tables coordinates of q: lut has
// num_tables * 16 floats, lut[16 t + v] = sum_{j < 4, bit (3 - j) of v} q[4t + j]
// (summed in a fixed order, so equal inputs give bit-identical tables).
void BuildFloatLut(const float* q, std::size_t num_tables, float* lut);

// The affine map from a quantised accumulator back to <b, q>.
struct LutScale {
  float delta = 1.0f;   // value of one accumulator unit
  float offset = 0.0f;  // sum of the per-table minima
};

// Quantises num_tables float tables (BuildFloatLut) into uint8 entries at
// `lut` (num_tables * 16 bytes) as described above. A query that is all zero
// gives delta = 1 and all-zero entries.
LutScale QuantizeLut(const float* float_lut, std::size_t num_tables, std::uint8_t* lut);

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_FASTSCAN_H_
