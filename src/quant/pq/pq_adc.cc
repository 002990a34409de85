#include "quant/pq/pq_adc.h"

namespace strata::quant {

float ComputeDistance(const PqDistanceTable& table, const std::uint8_t* code) {
  static const auto one = BestPqKernels().adc_one;
  return table.bias + one(table.values.data(), table.m, code);
}

void ComputeDistances(const PqDistanceTable& table, const std::uint8_t* codes, std::size_t n,
                      float* out) {
  static const auto batch = BestPqKernels().adc_batch;
  batch(table.values.data(), table.m, codes, n, table.bias, out);
}

void ComputeDistances(const PqKernels& kernels, const PqDistanceTable& table,
                      const std::uint8_t* codes, std::size_t n, float* out) {
  kernels.adc_batch(table.values.data(), table.m, codes, n, table.bias, out);
}

}  // namespace strata::quant
