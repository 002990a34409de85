// Every compiled ISA's PqKernels against the scalar reference.
#include "quant/pq/pq_kernels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "quant/pq/pq_test_util.h"
#include "base/random.h"

namespace strata::quant {
namespace {

std::vector<const PqKernels*> AvailableKernels() {
  std::vector<const PqKernels*> out;
  for (auto isa : {kernels::Isa::kScalar, kernels::Isa::kAvx2, kernels::Isa::kAvx512}) {
    if (const PqKernels* k = GetPqKernels(isa)) out.push_back(k);
  }
  return out;
}

TEST(PqKernels, ScalarAlwaysAvailableAndBestIsListed) {
  ASSERT_NE(GetPqKernels(kernels::Isa::kScalar), nullptr);
  EXPECT_EQ(BestPqKernels().isa, kernels::DetectIsa());
}

TEST(PqKernels, AdcMatchesExactSumForEveryM) {
  const auto& ref = ScalarPqKernels();
  Xoshiro256 rng(11);
  for (const std::size_t m : {1, 3, 7, 8, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 100, 192}) {
    std::vector<float> table(m * kPqCentroids);
    for (float& v : table) v = static_cast<float>(rng.Uniform());
    const std::size_t n = 37;
    std::vector<std::uint8_t> codes(n * m);
    for (auto& c : codes) c = static_cast<std::uint8_t>(rng.Below(256));
    for (const PqKernels* k : AvailableKernels()) {
      std::vector<float> batch(n);
      k->adc_batch(table.data(), m, codes.data(), n, 0.5f, batch.data());
      for (std::size_t i = 0; i < n; ++i) {
        double exact = 0;
        for (std::size_t j = 0; j < m; ++j) exact += table[j * kPqCentroids + codes[i * m + j]];
        const float one = k->adc_one(table.data(), m, codes.data() + i * m);
        EXPECT_NEAR(one, exact, 1e-5 * exact) << kernels::IsaName(k->isa) << " m=" << m;
        EXPECT_NEAR(batch[i], exact + 0.5, 1e-5 * exact) << kernels::IsaName(k->isa);
        EXPECT_NEAR(one, ref.adc_one(table.data(), m, codes.data() + i * m), 1e-5 * exact);
      }
    }
  }
}

TEST(PqKernels, TablesMatchScalar) {
  Xoshiro256 rng(12);
  for (const std::size_t dsub : {1, 2, 3, 4, 5, 8, 13, 24, 96}) {
    const auto q = testing::RandomData(1, dsub, 100 + dsub);
    const auto ct = testing::RandomData(dsub, kPqCentroids, 200 + dsub);
    std::vector<float> l2_ref(kPqCentroids), ip_ref(kPqCentroids);
    for (std::size_t c = 0; c < kPqCentroids; ++c) {
      double l2 = 0, ip = 0;
      for (std::size_t i = 0; i < dsub; ++i) {
        const double diff = q[i] - ct[i * kPqCentroids + c];
        l2 += diff * diff;
        ip += static_cast<double>(q[i]) * ct[i * kPqCentroids + c];
      }
      l2_ref[c] = static_cast<float>(l2);
      ip_ref[c] = static_cast<float>(-ip);
    }
    for (const PqKernels* k : AvailableKernels()) {
      std::vector<float> l2(kPqCentroids), ip(kPqCentroids);
      k->l2_table(q.data(), ct.data(), dsub, l2.data());
      k->ip_table(q.data(), ct.data(), dsub, ip.data());
      for (std::size_t c = 0; c < kPqCentroids; ++c) {
        EXPECT_NEAR(l2[c], l2_ref[c], 1e-5 * (1 + l2_ref[c])) << kernels::IsaName(k->isa);
        EXPECT_NEAR(ip[c], ip_ref[c], 1e-5 * (1 + std::fabs(ip_ref[c])));
      }
    }
  }
}

// Arg-min must be bit-identical across ISAs, including the first-minimum
// tie rule and the running best across calls.
TEST(PqKernels, ArgminIdenticalAcrossIsas) {
  Xoshiro256 rng(13);
  for (const std::size_t cols : {1, 5, 15, 16, 17, 31, 32, 33, 100, 1024}) {
    const std::size_t rows = 9, ld = cols + 3;
    std::vector<float> tile(rows * ld), norms(cols);
    // Few distinct values so that ties are common.
    for (float& v : tile) v = static_cast<float>(rng.Below(6));
    for (float& v : norms) v = static_cast<float>(rng.Below(3));
    std::vector<float> best_ref(rows);
    std::vector<std::uint32_t> lab_ref(rows, 7);
    for (std::size_t r = 0; r < rows; ++r) {
      best_ref[r] = r % 3 == 0 ? 2.0f : std::numeric_limits<float>::infinity();
    }
    const auto best0 = best_ref;
    ScalarPqKernels().argmin_update(tile.data(), ld, rows, cols, norms.data(), 100,
                                    best_ref.data(), lab_ref.data());
    for (std::size_t r = 0; r < rows; ++r) {  // check the scalar reference itself
      float b = best0[r];
      std::uint32_t l = 7;
      for (std::size_t j = 0; j < cols; ++j) {
        if (tile[r * ld + j] + norms[j] < b) {
          b = tile[r * ld + j] + norms[j];
          l = static_cast<std::uint32_t>(100 + j);
        }
      }
      ASSERT_EQ(best_ref[r], b);
      ASSERT_EQ(lab_ref[r], l);
    }
    for (const PqKernels* k : AvailableKernels()) {
      auto best = best0;
      std::vector<std::uint32_t> lab(rows, 7);
      k->argmin_update(tile.data(), ld, rows, cols, norms.data(), 100, best.data(), lab.data());
      EXPECT_EQ(best, best_ref) << kernels::IsaName(k->isa) << " cols=" << cols;
      EXPECT_EQ(lab, lab_ref) << kernels::IsaName(k->isa) << " cols=" << cols;
    }
  }
}

}  // namespace
}  // namespace strata::quant
