// Statistical tests of the listed code (listed_code.cc), the 2-bit RAM tier
// that the exact fallback of filtered search estimates listed rows with. Its
// lower bound is RaBitQ's with the 2-bit code's <o_bar, o>, so its violation
// rate must match the same prediction as the 1-bit code's, while its error
// (and so the rows an exact search must read) is about half. Method and
// thresholds as in estimator_test.cc: errors as beta_hat - beta for unit
// residual directions at inner product beta; means within 4 standard errors,
// rates within 4 binomial standard errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "quant/rabitq/quantizer.h"
#include "quant/rabitq/test_util.h"

namespace strata::quant::rabitq {
namespace {

using testing::EncodePair;
using testing::GaussianVector;
using testing::MakePair;
using testing::MakeQuantizer;
using testing::NormalUpperTail;
using testing::Pair;
using testing::PairSource;
using testing::RateTolerance;
using testing::Summarise;

double TrueDistance(Metric metric, const Pair& pair) {
  const std::size_t d = pair.o.size();
  if (metric == Metric::kL2) return testing::SquaredL2(pair.o.data(), pair.q.data(), d);
  return -testing::Dot(pair.o.data(), pair.q.data(), d);
}

// The 1-bit (RAM block) and listed estimates of one pair, as beta errors,
// and whether each lower bound exceeds the true distance.
struct ListedErrors {
  double one_bit = 0.0;
  double listed = 0.0;
  bool one_bit_violated = false;
  bool listed_violated = false;
};

ListedErrors Evaluate(const RabitqQuantizer& qz, const Pair& pair, const std::vector<float>& c,
                      const std::vector<float>& rotated_c) {
  const std::size_t d = c.size();
  const auto p = EncodePair(qz, pair.o.data(), pair.q.data(), rotated_c.data());
  const SlotEstimate one = qz.EstimateSlot(p.query, p.cluster, p.enc.block.data(), 0);
  const SlotEstimate two =
      qz.EstimateListed(p.query, p.cluster, p.enc.block.data(), 0, p.enc.listed.data());
  EXPECT_EQ(two.prefix_ip, one.prefix_ip);
  const Metric metric = qz.options().metric;
  const double truth = TrueDistance(metric, pair);
  const double scale = (metric == Metric::kL2 ? 2.0 : 1.0) *
                       std::sqrt(testing::SquaredL2(pair.o.data(), c.data(), d) *
                                 testing::SquaredL2(pair.q.data(), c.data(), d));
  ListedErrors e;
  e.one_bit = (truth - one.est) / scale;
  e.listed = (truth - two.est) / scale;
  e.one_bit_violated = one.lower > truth;
  e.listed_violated = two.lower > truth;
  return e;
}

TEST(RabitqListedCode, BoundViolationRateMatchesPromise) {
  // As for the 1-bit code: P(lower > true) = P(Z > eps0 / sqrt(1 - beta^2)),
  // at most 1 - Phi(1.9) = 2.87 %, whether the 1-bit prefix in RAM is the
  // whole code or a split prefix (the listed code carries the suffix).
  const std::size_t d = 256;
  const std::size_t n = 8000;
  for (std::size_t prefix : {std::size_t{0}, std::size_t{128}}) {
    const auto qz = MakeQuantizer({.dim = d, .total_bits = 9, .prefix_dim = prefix, .epsilon0 = 1.9f});
    for (double beta : {0.0, 0.5}) {
      PairSource source(d, 31);
      std::vector<float> rc(d);
      qz.RotateCentroid(source.c.data(), rc.data());
      std::size_t violations = 0;
      for (std::size_t i = 0; i < n; ++i) {
        violations += Evaluate(qz, source.Next(beta), source.c, rc).listed_violated ? 1 : 0;
      }
      const double rate = static_cast<double>(violations) / n;
      const double predicted = NormalUpperTail(1.9 / std::sqrt(1.0 - beta * beta));
      std::printf("[ rabitq ] listed code D=256 D_m=%zu beta=%.1f: violation rate %.4f "
                  "(predicted %.4f), %zu pairs\n",
                  qz.prefix_dim(), beta, rate, predicted, n);
      EXPECT_NEAR(rate, predicted, RateTolerance(predicted, n)) << "beta " << beta;
      EXPECT_LE(rate, NormalUpperTail(1.9) + RateTolerance(NormalUpperTail(1.9), n));
    }
  }
}

TEST(RabitqListedCode, UnbiasedAndTwiceAsTightAsOneBit) {
  // sqrt(1 - <o_bar,o>^2) / <o_bar,o>: about 0.75 at 1 bit, 0.36 at 2 bits
  // (<o_bar,o> 0.80 and 0.94 for Gaussian residuals), so the RMS error and
  // the bound's width should fall to about 0.48x, for every metric.
  const std::size_t d = 128;
  const std::size_t n = 4000;
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
    const auto qz = MakeQuantizer({.dim = d, .metric = metric, .total_bits = 9});
    PairSource source(d, 37);
    std::vector<float> rc(d);
    qz.RotateCentroid(source.c.data(), rc.data());
    std::vector<double> one;
    std::vector<double> two;
    for (std::size_t i = 0; i < n; ++i) {
      const ListedErrors e = Evaluate(qz, source.Next(0.5), source.c, rc);
      one.push_back(e.one_bit);
      two.push_back(e.listed);
    }
    const auto s1 = Summarise(one);
    const auto s2 = Summarise(two);
    std::printf("[ rabitq ] %s listed code D=128: mean %.5f (se %.5f), sd %.4f against 1 bit's "
                "%.4f (ratio %.3f)\n",
                std::string(MetricName(metric)).c_str(), s2.mean, s2.se, s2.sd, s1.sd,
                s2.sd / s1.sd);
    EXPECT_LT(std::abs(s2.mean), 4.0 * s2.se + 1e-4) << MetricName(metric);
    EXPECT_GT(s2.sd / s1.sd, 0.35) << MetricName(metric);
    EXPECT_LT(s2.sd / s1.sd, 0.60) << MetricName(metric);
  }
}

TEST(RabitqListedCode, VectorAtItsCentreIsExact) {
  const std::size_t d = 64;
  const auto qz = MakeQuantizer({.dim = d, .total_bits = 9});
  Xoshiro256 rng(5);
  const std::vector<float> c = GaussianVector(rng, d);
  const std::vector<float> q = GaussianVector(rng, d);
  std::vector<float> rc(d);
  qz.RotateCentroid(c.data(), rc.data());
  const auto p = EncodePair(qz, c.data(), q.data(), rc.data());
  const SlotEstimate e =
      qz.EstimateListed(p.query, p.cluster, p.enc.block.data(), 0, p.enc.listed.data());
  EXPECT_NEAR(e.est, testing::SquaredL2(c.data(), q.data(), d), 1e-3);
  EXPECT_EQ(e.est, e.lower);
}

TEST(RabitqListedCode, ClusterEncodingMatchesOneByOne) {
  const std::size_t d = 96;  // D' = 128, split at 64
  const std::size_t n = 70;
  const auto qz = MakeQuantizer({.dim = d, .total_bits = 5, .prefix_dim = 64});
  Xoshiro256 rng(9);
  const std::vector<float> c = GaussianVector(rng, d, 0.3);
  const std::vector<float> rows = GaussianVector(rng, n * d);
  const std::size_t bytes = qz.layout().listed_code_bytes();
  EXPECT_EQ(bytes, 12u + 16u + 8u);
  std::vector<std::uint8_t> listed(n * bytes, 0xAB);
  std::vector<std::uint8_t> blocks((n + kBatchSize - 1) / kBatchSize * qz.layout().ram_batch_bytes());
  ASSERT_TRUE(qz.EncodeCluster(rows.data(), n, c.data(), blocks.data(), nullptr, 2, listed.data())
                  .ok());
  std::vector<float> rc(qz.padded_dim());
  qz.RotateCentroid(c.data(), rc.data());
  std::vector<std::uint8_t> one(bytes);
  for (std::size_t i = 0; i < n; ++i) {
    RabitqCode code;
    ASSERT_TRUE(qz.Encode(rows.data() + i * d, rc.data(), &code, one.data()).ok());
    EXPECT_EQ(0, std::memcmp(one.data(), listed.data() + i * bytes, bytes)) << "row " << i;
  }
}

}  // namespace
}  // namespace strata::quant::rabitq
