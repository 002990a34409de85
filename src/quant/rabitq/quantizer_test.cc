// Deterministic tests of the RaBitQ quantizer: options, encoding, layouts,
// the estimators' algebra against their defining formulas, ISA agreement and
// serialisation. The statistical claims are in estimator_test.cc.
#include "quant/rabitq/quantizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "quant/rabitq/test_util.h"

namespace strata::quant::rabitq {
namespace {

using testing::Dot;
using testing::EncodeOne;
using testing::GaussianVector;
using testing::MakeQuantizer;
using testing::SquaredL2;

// The B-bit grid vector w of an encoded vector (quantizer.h), from its
// canonical bits and packed ex-code.
std::vector<double> GridVector(const RabitqQuantizer& qz, const RabitqCode& code) {
  const std::size_t dp = qz.padded_dim();
  const int ex = qz.ex_bits();
  std::vector<std::uint8_t> k(dp, 0);
  if (ex > 0) UnpackExCode(code.ex_code.data(), dp, ex, k.data());
  std::vector<double> w(dp);
  const double half = 0.5 * ((1 << (ex + 1)) - 1);
  for (std::size_t i = 0; i < dp; ++i) {
    const int bit = (code.bits[i / 8] >> (7 - i % 8)) & 1;
    w[i] = static_cast<double>((bit << ex) + k[i]) - half;
  }
  return w;
}

// The estimator's definition evaluated in double from rotated vectors, with
// grid vector w over the first `m` coordinates scaled by D'/m:
//   L2: ||r||^2 + ||q - c||^2 - 2 (D'/m) ||r||^2 <w, q - c>_m / <w, r>
//   IP: -<q, c> - <r, c> - (D'/m) ||r||^2 <w, q - c>_m / <w, r>
double Definition(Metric metric, const std::vector<float>& o, const std::vector<float>& c,
                  const std::vector<float>& q, const std::vector<double>& w, std::size_t m) {
  const std::size_t dp = o.size();
  double norm_sq = 0, wr = 0, wqc = 0, rc = 0, qc = 0, qc_dist = 0;
  for (std::size_t i = 0; i < dp; ++i) {
    const double r = static_cast<double>(o[i]) - c[i];
    norm_sq += r * r;
    wr += w[i] * r;
    rc += r * c[i];
    qc += static_cast<double>(q[i]) * c[i];
    qc_dist += (static_cast<double>(q[i]) - c[i]) * (q[i] - c[i]);
    if (i < m) wqc += w[i] * (static_cast<double>(q[i]) - c[i]);
  }
  const double s = static_cast<double>(dp) / static_cast<double>(m);
  const double inner = s * norm_sq * wqc / wr;  // estimate of <r, q - c>
  if (metric == Metric::kL2) return norm_sq + qc_dist - 2.0 * inner;
  const double ip = -qc - rc - inner;
  return metric == Metric::kCosine ? 1.0 + ip : ip;
}

TEST(RabitqOptions, Validate) {
  RabitqOptions ok{.dim = 100};
  EXPECT_TRUE(ok.Validate().ok());
  auto bad = [](RabitqOptions o) { return o.Validate().IsInvalidArgument(); };
  EXPECT_TRUE(bad({.dim = 0}));
  EXPECT_TRUE(bad({.dim = kMaxRotatorDim + 1}));
  EXPECT_TRUE(bad({.dim = 100, .total_bits = 0}));
  EXPECT_TRUE(bad({.dim = 100, .total_bits = 10}));
  EXPECT_TRUE(bad({.dim = 100, .prefix_dim = 96}));
  EXPECT_TRUE(bad({.dim = 100, .prefix_dim = 192}));
  EXPECT_TRUE(bad({.dim = 100, .epsilon0 = 0.0f}));
  EXPECT_TRUE(bad({.dim = 100, .split_epsilon = std::numeric_limits<float>::infinity()}));
  EXPECT_TRUE(bad({.dim = 100, .metric = static_cast<Metric>(9)}));
  EXPECT_TRUE(bad({.dim = 100, .rotator = static_cast<RotatorKind>(9)}));
  EXPECT_TRUE(bad({.dim = 100, .ex_search = static_cast<ExCodeSearch>(9)}));
  EXPECT_TRUE(RabitqQuantizer::Create({.dim = 0}).status().IsInvalidArgument());
}

TEST(RabitqQuantizer, ResolvesLayout) {
  const auto qz = MakeQuantizer({.dim = 100, .total_bits = 5});
  EXPECT_EQ(qz.padded_dim(), 128u);
  EXPECT_EQ(qz.prefix_dim(), 128u);
  EXPECT_EQ(qz.options().prefix_dim, 128u);
  EXPECT_EQ(qz.ex_bits(), 4);
  EXPECT_EQ(qz.layout().ssd_record_bytes(), 0u + 64u + 8u);
  const auto split = MakeQuantizer({.dim = 768, .total_bits = 9, .prefix_dim = 256});
  EXPECT_EQ(split.layout().ram_batch_bytes(), 4u * 256 + 384);
  EXPECT_EQ(split.layout().ssd_record_bytes(), 64u + 768u + 8u);
}

TEST(RabitqQuantizer, SignBitsAreThoseOfTheRotatedResidual) {
  Xoshiro256 rng(1);
  const auto qz = MakeQuantizer({.dim = 100});
  const auto x = GaussianVector(rng, 100);
  const auto centroid = GaussianVector(rng, 100, 0.3);
  std::vector<float> rc(128), rx(128);
  qz.RotateCentroid(centroid.data(), rc.data());
  qz.rotator().Rotate(x.data(), rx.data());
  RabitqCode code;
  ASSERT_TRUE(qz.Encode(x.data(), rc.data(), &code).ok());
  ASSERT_EQ(code.bits.size(), 16u);
  for (std::size_t i = 0; i < 128; ++i) {
    const bool bit = (code.bits[i / 8] >> (7 - i % 8)) & 1;
    EXPECT_EQ(bit, rx[i] - rc[i] > 0.0f) << i;
  }
}

// For every metric, B and prefix length, the refined estimate equals the
// B-bit definition and the prefix estimate the D_m-bit one (up to the LUT
// rounding bound).
TEST(RabitqQuantizer, EstimatesMatchTheirDefinitions) {
  Xoshiro256 rng(2);
  const std::size_t d = 200;  // D' = 256
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    for (std::uint32_t bits : {1u, 2u, 5u, 9u}) {
      for (std::size_t dm : {256u, 128u, 64u}) {
        const auto qz = MakeQuantizer(
            {.dim = d, .metric = metric, .total_bits = bits, .prefix_dim = dm, .seed = 5});
        const auto centroid = GaussianVector(rng, d, 0.5);
        std::vector<float> rc(256);
        qz.RotateCentroid(centroid.data(), rc.data());
        for (int trial = 0; trial < 3; ++trial) {
          auto x = GaussianVector(rng, d);
          auto q = GaussianVector(rng, d);
          if (metric == Metric::kCosine) {
            kernels::NormalizeInPlace(x.data(), d);
            kernels::NormalizeInPlace(q.data(), d);
          }
          std::vector<float> ro(256);
          RabitqQuery query;
          ASSERT_TRUE(qz.PrepareQuery(q.data(), &query).ok());
          RabitqCode code;
          const auto enc = EncodeOne(qz, x.data(), rc.data(), &code);
          ASSERT_FALSE(enc.block.empty());
          qz.rotator().Rotate(x.data(), ro.data());
          const ClusterQueryFactors cluster = qz.ForCluster(query, rc.data());

          // Prefix (in-RAM) estimate: the 1-bit definition over D_m.
          std::vector<double> u(256);
          for (std::size_t i = 0; i < 256; ++i) {
            u[i] = ((code.bits[i / 8] >> (7 - i % 8)) & 1) ? 0.5 : -0.5;
          }
          BatchEstimates be;
          qz.EstimateBatch(query, cluster, enc.block.data(), &be);
          const double prefix_def = Definition(metric, ro, rc, query.rotated, u, dm);
          const double lut_bound =
              std::fabs(code.f_rescale) * 0.5 * query.lut_scale.delta * static_cast<double>(dm / 4);
          EXPECT_NEAR(be.est[0], prefix_def, lut_bound + 1e-3 * (1 + std::fabs(prefix_def)));
          EXPECT_FLOAT_EQ(be.lower[0], be.est[0] - code.f_error * cluster.g_error);

          // Refined estimate with the exact prefix sum: the B-bit definition.
          const float exact_prefix = qz.ExactPrefixIp(query, enc.block.data(), 0);
          const float refined = qz.Refine(query, cluster, exact_prefix, enc.record.data());
          const double full_def =
              Definition(metric, ro, rc, query.rotated, GridVector(qz, code), 256);
          EXPECT_NEAR(refined, full_def, 2e-4 * (1 + std::fabs(full_def)))
              << MetricName(metric) << " B=" << bits << " dm=" << dm;
        }
      }
    }
  }
}

TEST(RabitqQuantizer, ExactPrefixIpIsTheBitSum) {
  Xoshiro256 rng(3);
  const auto qz = MakeQuantizer({.dim = 300, .prefix_dim = 192});
  const auto q = GaussianVector(rng, 300);
  RabitqQuery query;
  ASSERT_TRUE(qz.PrepareQuery(q.data(), &query).ok());
  std::vector<RabitqCode> codes(32);
  std::vector<const RabitqCode*> pointers;
  std::vector<float> rc(qz.padded_dim(), 0.0f);
  for (auto& code : codes) {
    const auto x = GaussianVector(rng, 300);
    ASSERT_TRUE(qz.Encode(x.data(), rc.data(), &code).ok());
    pointers.push_back(&code);
  }
  std::vector<std::uint8_t> block(qz.layout().ram_batch_bytes());
  PackRamBatch(qz.layout(), pointers, block.data());
  BatchEstimates be;
  qz.EstimateBatch(query, qz.ForCluster(query, rc.data()), block.data(), &be);
  for (std::size_t s = 0; s < 32; ++s) {
    double expected = 0.0;
    for (std::size_t i = 0; i < 192; ++i) {
      if ((codes[s].bits[i / 8] >> (7 - i % 8)) & 1) expected += query.rotated[i];
    }
    const float exact = qz.ExactPrefixIp(query, block.data(), s);
    EXPECT_NEAR(exact, expected, 1e-4);
    // FastScan's value is within half a LUT step per table of it.
    EXPECT_LE(std::fabs(be.prefix_ip[s] - exact), 0.5 * query.lut_scale.delta * 48 + 1e-4);
  }
}

TEST(RabitqQuantizer, EstimateBatchIsIdenticalOnEveryIsa) {
  Xoshiro256 rng(4);
  for (std::size_t d : {128u, 768u, 1536u}) {
    const auto qz = MakeQuantizer({.dim = d, .metric = Metric::kL2});
    const std::size_t n = 32;
    const auto data = GaussianVector(rng, n * d);
    const auto centroid = GaussianVector(rng, d, 0.2);
    std::vector<std::uint8_t> block(qz.layout().ram_batch_bytes());
    ASSERT_TRUE(qz.EncodeCluster(data.data(), n, centroid.data(), block.data(), nullptr, 1).ok());
    const auto q = GaussianVector(rng, d);
    RabitqQuery query;
    ASSERT_TRUE(qz.PrepareQuery(q.data(), &query).ok());
    std::vector<float> rc(qz.padded_dim());
    qz.RotateCentroid(centroid.data(), rc.data());
    const auto cluster = qz.ForCluster(query, rc.data());
    BatchEstimates reference;
    qz.EstimateBatch(query, cluster, block.data(), *GetFastScanKernels(kernels::Isa::kScalar),
                     &reference);
    for (auto isa : {kernels::Isa::kAvx2, kernels::Isa::kAvx512}) {
      const FastScanKernels* k = GetFastScanKernels(isa);
      if (k == nullptr) continue;
      BatchEstimates got;
      qz.EstimateBatch(query, cluster, block.data(), *k, &got);
      EXPECT_EQ(0, std::memcmp(&got, &reference, sizeof(got))) << kernels::IsaName(isa);
    }
  }
}

TEST(RabitqQuantizer, VectorAtItsCentroidIsExact) {
  Xoshiro256 rng(5);
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
    const auto qz = MakeQuantizer({.dim = 64, .metric = metric, .total_bits = 4});
    const auto c = GaussianVector(rng, 64);
    const auto q = GaussianVector(rng, 64);
    std::vector<float> rc(64);
    qz.RotateCentroid(c.data(), rc.data());
    RabitqCode code;
    const auto enc = EncodeOne(qz, c.data(), rc.data(), &code);
    RabitqQuery query;
    ASSERT_TRUE(qz.PrepareQuery(q.data(), &query).ok());
    const auto cluster = qz.ForCluster(query, rc.data());
    const double truth =
        metric == Metric::kL2 ? SquaredL2(q.data(), c.data(), 64) : -Dot(q.data(), c.data(), 64);
    BatchEstimates be;
    qz.EstimateBatch(query, cluster, enc.block.data(), &be);
    EXPECT_EQ(be.est[0], cluster.g_add);
    EXPECT_EQ(be.lower[0], cluster.g_add);
    EXPECT_EQ(qz.Refine(query, cluster, be.prefix_ip[0], enc.record.data()), cluster.g_add);
    EXPECT_NEAR(cluster.g_add, truth, 1e-4 * (1 + std::fabs(truth)));
  }
}

TEST(RabitqQuantizer, EmptySlotsEstimateTheCentroidDistance) {
  Xoshiro256 rng(6);
  const auto qz = MakeQuantizer({.dim = 128});
  const auto data = GaussianVector(rng, 5 * 128);
  const auto c = GaussianVector(rng, 128);
  std::vector<std::uint8_t> block(qz.layout().ram_batch_bytes());
  ASSERT_TRUE(qz.EncodeCluster(data.data(), 5, c.data(), block.data(), nullptr).ok());
  const auto q = GaussianVector(rng, 128);
  RabitqQuery query;
  ASSERT_TRUE(qz.PrepareQuery(q.data(), &query).ok());
  const auto cluster = qz.ForClusterFromDistances(3.0f, 0.0f);
  BatchEstimates be;
  qz.EstimateBatch(query, cluster, block.data(), &be);
  for (std::size_t s = 5; s < 32; ++s) EXPECT_EQ(be.est[s], 9.0f);
}

TEST(RabitqQuantizer, EncodeClusterMatchesPerVectorEncoding) {
  Xoshiro256 rng(7);
  for (Metric metric : {Metric::kL2, Metric::kCosine}) {
    const auto qz =
        MakeQuantizer({.dim = 100, .metric = metric, .total_bits = 3, .prefix_dim = 64, .seed = 9});
    const std::size_t n = 70;  // two full batches and a partial one
    const auto data = GaussianVector(rng, n * 100);
    const auto c = GaussianVector(rng, 100, 0.1);
    const auto& layout = qz.layout();
    std::vector<std::uint8_t> blocks(3 * layout.ram_batch_bytes(), 0xAA);
    std::vector<std::uint8_t> records(n * layout.ssd_record_bytes(), 0xAA);
    ASSERT_TRUE(qz.EncodeCluster(data.data(), n, c.data(), blocks.data(), records.data(), 2).ok());

    std::vector<float> rc(128);
    qz.RotateCentroid(c.data(), rc.data());
    std::vector<RabitqCode> codes(n);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(qz.Encode(data.data() + i * 100, rc.data(), &codes[i]).ok());
    }
    for (std::size_t b = 0; b < 3; ++b) {
      std::vector<const RabitqCode*> pointers;
      for (std::size_t i = b * 32; i < std::min(n, b * 32 + 32); ++i) pointers.push_back(&codes[i]);
      std::vector<std::uint8_t> expected(layout.ram_batch_bytes());
      PackRamBatch(layout, pointers, expected.data());
      EXPECT_EQ(0, std::memcmp(expected.data(), blocks.data() + b * layout.ram_batch_bytes(),
                               expected.size()))
          << "batch " << b;
    }
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<std::uint8_t> expected(layout.ssd_record_bytes());
      WriteSsdRecord(layout, codes[i], expected.data());
      EXPECT_EQ(0, std::memcmp(expected.data(), records.data() + i * layout.ssd_record_bytes(),
                               expected.size()))
          << "record " << i;
    }
  }
}

TEST(RabitqQuantizer, DenseRotatorClusterEncodingAgreesWithSingle) {
  Xoshiro256 rng(8);
  const auto qz = MakeQuantizer({.dim = 96, .total_bits = 2, .rotator = RotatorKind::kDense});
  const auto data = GaussianVector(rng, 40 * 96);
  const auto c = GaussianVector(rng, 96, 0.1);
  std::vector<std::uint8_t> blocks(2 * qz.layout().ram_batch_bytes());
  std::vector<std::uint8_t> records(40 * qz.layout().ssd_record_bytes());
  ASSERT_TRUE(qz.EncodeCluster(data.data(), 40, c.data(), blocks.data(), records.data()).ok());
  const auto q = GaussianVector(rng, 96);
  RabitqQuery query;
  ASSERT_TRUE(qz.PrepareQuery(q.data(), &query).ok());
  std::vector<float> rc(128);
  qz.RotateCentroid(c.data(), rc.data());
  const auto cluster = qz.ForCluster(query, rc.data());
  for (std::size_t i = 0; i < 40; ++i) {
    RabitqCode code;
    const auto enc = EncodeOne(qz, data.data() + i * 96, rc.data(), &code);
    const float single =
        qz.Refine(query, cluster, qz.ExactPrefixIp(query, enc.block.data(), 0), enc.record.data());
    const std::uint8_t* block = blocks.data() + (i / 32) * qz.layout().ram_batch_bytes();
    const float bulk = qz.Refine(query, cluster, qz.ExactPrefixIp(query, block, i % 32),
                                 records.data() + i * qz.layout().ssd_record_bytes());
    // sgemm vs sgemv rounding may flip a sign bit of a near-zero coordinate.
    EXPECT_NEAR(bulk, single, 0.02 * (1 + std::fabs(single))) << i;
  }
}

TEST(RabitqQuantizer, RejectsBadVectors) {
  const auto qz = MakeQuantizer({.dim = 64, .metric = Metric::kCosine});
  std::vector<float> rc(64, 0.0f), zero(64, 0.0f), nan(64, 1.0f);
  nan[3] = std::numeric_limits<float>::quiet_NaN();
  RabitqCode code;
  EXPECT_TRUE(qz.Encode(zero.data(), rc.data(), &code).IsInvalidArgument());
  EXPECT_TRUE(qz.Encode(nan.data(), rc.data(), &code).IsInvalidArgument());
  RabitqQuery query;
  EXPECT_TRUE(qz.PrepareQuery(zero.data(), &query).IsInvalidArgument());
  EXPECT_TRUE(qz.PrepareQuery(nan.data(), &query).IsInvalidArgument());

  std::vector<float> data(10 * 64, 1.0f);
  data[7 * 64 + 5] = std::numeric_limits<float>::infinity();
  std::vector<std::uint8_t> block(qz.layout().ram_batch_bytes());
  const Status s = qz.EncodeCluster(data.data(), 10, rc.data(), block.data(), nullptr);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("row 7"), std::string::npos) << s.ToString();

  const auto l2 = MakeQuantizer({.dim = 64});
  EXPECT_TRUE(l2.Encode(nan.data(), rc.data(), &code).IsInvalidArgument());
  EXPECT_TRUE(l2.Encode(zero.data(), rc.data(), &code).ok());  // fine under L2
}

TEST(RabitqQuantizer, SerializeRoundTrip) {
  Xoshiro256 rng(9);
  for (auto ex_search : {ExCodeSearch::kExact, ExCodeSearch::kFast}) {
    const auto qz = MakeQuantizer({.dim = 150,
                                   .metric = Metric::kInnerProduct,
                                   .total_bits = 6,
                                   .prefix_dim = 128,
                                   .seed = 77,
                                   .split_epsilon = 2.5f,
                                   .ex_search = ex_search});
    std::vector<std::uint8_t> blob;
    qz.Serialize(&blob);
    auto back = RabitqQuantizer::Deserialize(blob);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->options().dim, 150u);
    EXPECT_EQ(back->options().metric, Metric::kInnerProduct);
    EXPECT_EQ(back->options().total_bits, 6u);
    EXPECT_EQ(back->prefix_dim(), 128u);
    EXPECT_EQ(back->options().split_epsilon, 2.5f);
    EXPECT_EQ(back->options().ex_search, ex_search);
    EXPECT_EQ(back->fast_ex_fraction(), qz.fast_ex_fraction());
    const auto data = GaussianVector(rng, 40 * 150);
    const auto c = GaussianVector(rng, 150);
    std::vector<std::uint8_t> b1(2 * qz.layout().ram_batch_bytes());
    std::vector<std::uint8_t> b2(b1.size());
    std::vector<std::uint8_t> r1(40 * qz.layout().ssd_record_bytes()), r2(r1.size());
    ASSERT_TRUE(qz.EncodeCluster(data.data(), 40, c.data(), b1.data(), r1.data()).ok());
    ASSERT_TRUE(back->EncodeCluster(data.data(), 40, c.data(), b2.data(), r2.data()).ok());
    EXPECT_EQ(b1, b2);
    EXPECT_EQ(r1, r2);

    auto damaged = blob;
    damaged[20] ^= 1;
    EXPECT_TRUE(RabitqQuantizer::Deserialize(damaged).status().IsCorruption());
    damaged = blob;
    damaged.resize(blob.size() - 1);
    EXPECT_TRUE(RabitqQuantizer::Deserialize(damaged).status().IsCorruption());
    damaged = blob;
    damaged[4] = 2;
    EXPECT_TRUE(RabitqQuantizer::Deserialize(damaged).status().IsNotSupported());
  }
}

TEST(RabitqQuantizer, HighBitEstimatesAreNearlyExactForEveryMetric) {
  Xoshiro256 rng(10);
  const std::size_t d = 256;
  for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
    const auto qz = MakeQuantizer({.dim = d, .metric = metric, .total_bits = 9});
    const auto c = GaussianVector(rng, d, 0.5);
    std::vector<float> rc(d);
    qz.RotateCentroid(c.data(), rc.data());
    const auto q = GaussianVector(rng, d);
    RabitqQuery query;
    ASSERT_TRUE(qz.PrepareQuery(q.data(), &query).ok());
    const auto cluster = qz.ForCluster(query, rc.data());
    for (int trial = 0; trial < 20; ++trial) {
      const auto x = GaussianVector(rng, d);
      RabitqCode code;
      const auto enc = EncodeOne(qz, x.data(), rc.data(), &code);
      const float est = qz.Refine(query, cluster, qz.ExactPrefixIp(query, enc.block.data(), 0),
                                  enc.record.data());
      double truth;
      if (metric == Metric::kL2) {
        truth = SquaredL2(x.data(), q.data(), d);
      } else if (metric == Metric::kInnerProduct) {
        truth = -Dot(x.data(), q.data(), d);
      } else {
        truth = 1.0 - Dot(x.data(), q.data(), d) /
                          std::sqrt(Dot(x.data(), x.data(), d) * Dot(q.data(), q.data(), d));
      }
      // 9-bit codes: the error is a few thousandths of ||r|| ||q - c||.
      const double scale = metric == Metric::kCosine ? 1.0 : 2.0 * d;
      EXPECT_NEAR(est, truth, 0.01 * scale) << MetricName(metric);
    }
  }
}

}  // namespace
}  // namespace strata::quant::rabitq
