// Entry points of the per-ISA FastScan translation units, for fastscan.cc
// only. They may be called only after GetFastScanKernels has confirmed the
// CPU supports the ISA.
#ifndef STRATA_QUANT_RABITQ_FASTSCAN_ISA_H_
#define STRATA_QUANT_RABITQ_FASTSCAN_ISA_H_

#include <cstddef>
#include <cstdint>

namespace strata::quant::rabitq {

#if defined(__x86_64__)
// Same contract as FastScanAccumulateFn (fastscan.h).
void FastScanAccumulateAvx2(const std::uint8_t* codes, const std::uint8_t* lut,
                            std::size_t num_tables, std::uint32_t* out);
void FastScanAccumulateAvx512(const std::uint8_t* codes, const std::uint8_t* lut,
                              std::size_t num_tables, std::uint32_t* out);
#endif

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_FASTSCAN_ISA_H_
