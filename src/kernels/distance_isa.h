// Entry points of the per-ISA kernel translation units, for dispatch.cc and
// convert.cc only (everyone else goes through GetKernels / BestKernels).
//
// The AVX2 / AVX-512 functions may be *called* only after the CPU check in
// dispatch.cc says that ISA is usable; the *KernelTable() getters themselves
// execute no ISA-specific instruction and are safe to call anywhere.
#ifndef STRATA_KERNELS_DISTANCE_ISA_H_
#define STRATA_KERNELS_DISTANCE_ISA_H_

#include <cstddef>
#include <cstdint>

#include "kernels/distance.h"

namespace strata::kernels {

const DistanceKernels* ScalarKernelTable();

#if defined(STRATA_KERNELS_HAVE_X86)
const DistanceKernels* Avx2KernelTable();
const DistanceKernels* Avx512KernelTable();

// Bulk conversions, bit-identical to the scalar ones in half_inl.h. Arrays of
// `n` elements, non-overlapping.
void Avx2HalfToFloatN(const std::uint16_t* in, float* out, std::size_t n);
void Avx2FloatToHalfN(const float* in, std::uint16_t* out, std::size_t n);
void Avx2BFloat16ToFloatN(const std::uint16_t* in, float* out, std::size_t n);
void Avx2FloatToBFloat16N(const float* in, std::uint16_t* out, std::size_t n);
#endif

}  // namespace strata::kernels

#endif  // STRATA_KERNELS_DISTANCE_ISA_H_
