// Listed codes: a 2-bit extended RaBitQ code per vector, kept in RAM for
// searches that estimate a listed set of rows one by one (the exact fallback
// of filtered search, search/ivf_restricted.cc). Such a search reads every row
// whose lower bound falls below the k-th distance, and RaBitQ's bound shrinks
// with sqrt(1 - <o_bar, o>^2) / <o_bar, o>: 0.80 -> 0.94 from 1 to 2 bits at
// D' = 128 cuts the rows read about 3x (bench/results/
// rabitq_listed_bound_model_2026-12-07.md). Gao et al., "Practical and
// Asymptotically Optimal Quantization of High-Dimensional Vectors in Euclidean
// Space for ANN Search" (SIGMOD 2025) give the code and its estimator; the
// bound is RaBitQ's (Gao and Long, SIGMOD 2024) with the 2-bit grid vector in
// place of the sign vector, as the extended paper's analysis allows.
//
// The code is its own, with the scale chosen for 2 bits (ExCodeBestScale at
// ex = 1), not the top of the SSD ex-code: a truncated 9-bit code's grid is
// not the best 2-bit grid. Formulas are the re-ranking estimator's
// (quantizer.h) with ex = 1: w_i = sign(r_i) (k_i + 1/2), k_i in {0, 1},
//   <w, q> = 2 <b, q> + <k', q> - 3/2 sum(q)
//   f_error_2 = mult eps0 ||r|| sqrt((||r||^2 ||w||^2 / <w, r>^2 - 1) / (D' - 1))
#include <algorithm>
#include <cmath>
#include <cstring>

#include "quant/rabitq/quantizer.h"

namespace strata::quant::rabitq {

void RabitqQuantizer::EncodeListedCode(const float* o, const float* c,
                                       const std::vector<std::uint8_t>& bits,
                                       std::uint8_t* out) const {
  const std::size_t dp = layout_.padded_dim;
  thread_local std::vector<float> a;
  thread_local std::vector<std::uint8_t> k;
  a.resize(dp);
  k.resize(dp);
  double norm_sq = 0.0;
  double rc = 0.0;
  for (std::size_t i = 0; i < dp; ++i) {
    const double r = static_cast<double>(o[i]) - c[i];
    norm_sq += r * r;
    rc += r * c[i];
  }
  const double norm = std::sqrt(norm_sq);
  for (std::size_t i = 0; i < dp; ++i) {
    a[i] = static_cast<float>(std::fabs(static_cast<double>(o[i]) - c[i]) / norm);
  }
  // ex = 1 sweeps at most D' events: the exact scale costs little here.
  ExCodeQuantize(a.data(), dp, 1, ExCodeBestScale(a.data(), dp, 1), k.data());
  double wr = 0.0;  // <w, r>
  double wc = 0.0;  // <w, c>
  double ww = 0.0;  // ||w||^2
  for (std::size_t i = 0; i < dp; ++i) {
    const double r = static_cast<double>(o[i]) - c[i];
    const double mag = k[i] + 0.5;
    const bool positive = r > 0.0;
    wr += mag * std::fabs(r);
    wc += (positive ? mag : -mag) * c[i];
    ww += mag * mag;
    if (!positive) k[i] = static_cast<std::uint8_t>(1 - k[i]);  // stored k' (ex_code.h)
  }
  const bool l2 = options_.metric == Metric::kL2;
  const double mult = l2 ? 2.0 : 1.0;
  const double base = l2 ? norm_sq : -rc;
  const double ratio = norm_sq * ww / (wr * wr);
  const double spread = std::sqrt(std::max(0.0, (ratio - 1.0) / static_cast<double>(dp - 1)));
  const float factors[3] = {static_cast<float>(base + mult * norm_sq * wc / wr),
                            static_cast<float>(-mult * norm_sq / wr),
                            static_cast<float>(mult * options_.epsilon0 * norm * spread)};
  std::memcpy(out, factors, sizeof(factors));
  PackExCode(k.data(), dp, 1, out + 12);
  std::memcpy(out + 12 + dp / 8, bits.data() + layout_.prefix_code_bytes(),
              layout_.suffix_code_bytes());
}

SlotEstimate RabitqQuantizer::EstimateListed(const RabitqQuery& query,
                                             const ClusterQueryFactors& cluster,
                                             const std::uint8_t* block, std::size_t slot,
                                             const std::uint8_t* listed_code) const {
  const std::size_t dp = layout_.padded_dim;
  float factors[3];
  std::memcpy(factors, listed_code, sizeof(factors));
  const float* q = query.rotated.data();
  SlotEstimate e;
  e.prefix_ip = ExactPrefixIp(query, block, slot);
  // <b, q> over the suffix, from the listed code's copy of the suffix bits.
  const double ip_b = e.prefix_ip + SuffixIp(query, listed_code + 12 + dp / 8);
  const double wq =
      2.0 * ip_b + ExCodeDot(listed_code + 12, q, dp, 1) - 1.5 * static_cast<double>(query.sum_all);
  e.est = static_cast<float>(factors[0] + cluster.g_add + factors[1] * wq);
  e.lower = e.est - factors[2] * cluster.g_error;
  return e;
}

}  // namespace strata::quant::rabitq
