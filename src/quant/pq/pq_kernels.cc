#include "quant/pq/pq_kernels.h"

#include "quant/pq/pq_kernels_generic.h"

namespace strata::quant {

const PqKernels& ScalarPqKernels() {
  static const PqKernels k = [] {
    PqKernels t;
    t.isa = kernels::Isa::kScalar;
    t.argmin_update = &ArgminUpdateGeneric;
    t.adc_one = &AdcOneGeneric;
    t.adc_batch = &AdcBatchGeneric;
    t.l2_table = &L2TableGeneric;
    t.ip_table = &IpTableGeneric;
    return t;
  }();
  return k;
}

const PqKernels* GetPqKernels(kernels::Isa isa) {
  // DetectIsa() checks CPUID/XCR0 (and the STRATA_ISA cap): never hand out a
  // table whose instructions the CPU would fault on.
  if (static_cast<int>(isa) > static_cast<int>(kernels::DetectIsa())) return nullptr;
  switch (isa) {
    case kernels::Isa::kScalar:
      return &ScalarPqKernels();
    case kernels::Isa::kAvx2:
      return Avx2PqKernels();
    case kernels::Isa::kAvx512:
      return Avx512PqKernels();
  }
  return nullptr;
}

const PqKernels& BestPqKernels() {
  static const PqKernels* best = [] {
    for (int i = static_cast<int>(kernels::DetectIsa()); i > 0; --i) {
      if (const PqKernels* k = GetPqKernels(static_cast<kernels::Isa>(i))) return k;
    }
    return &ScalarPqKernels();
  }();
  return *best;
}

}  // namespace strata::quant
