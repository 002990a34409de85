#include "quant/pq/product_quantizer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "quant/pq/pq_adc.h"
#include "quant/pq/pq_test_util.h"

namespace strata::quant {
namespace {

using testing::ClusteredData;
using testing::ExactIp;
using testing::ExactL2;
using testing::RandomData;

PqOptions Options(std::size_t m, bool center = true) {
  PqOptions o;
  o.m = m;
  o.center = center;
  o.iterations = 10;
  o.threads = 2;
  return o;
}

double MeanSquaredError(const ProductQuantizer& pq, const std::vector<float>& x, std::size_t n) {
  const std::size_t d = pq.dim();
  std::vector<std::uint8_t> codes(n * pq.m());
  std::vector<float> dec(n * d);
  EXPECT_TRUE(pq.Encode(x.data(), n, codes.data(), 2).ok());
  EXPECT_TRUE(pq.Decode(codes.data(), n, dec.data()).ok());
  double err = 0;
  for (std::size_t i = 0; i < n; ++i) err += ExactL2(&x[i * d], &dec[i * d], d);
  return err / static_cast<double>(n);
}

TEST(SubspaceOffsets, UnevenSplitPutsLongerSubspacesFirst) {
  EXPECT_EQ(SubspaceOffsets(10, 3), (std::vector<std::uint32_t>{0, 4, 7, 10}));
  EXPECT_EQ(SubspaceOffsets(8, 4), (std::vector<std::uint32_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(SubspaceOffsets(5, 5), (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5}));
}

// The ADC value must be exactly the metric distance to the decoded vector
// (to float tolerance), for every metric, with and without centring, on an
// uneven split (d = 100, m = 7: subspaces of 15 and 14 dims), on data far
// from the origin, and for every compiled ISA.
TEST(ProductQuantizer, AdcEqualsDistanceToDecoded) {
  const std::size_t n = 2000, d = 100, m = 7;
  const auto x = RandomData(n, d, 1, 1.0f, 5.0f);
  const auto q = RandomData(20, d, 2, 1.0f, 5.0f);
  for (const bool center : {true, false}) {
    auto pq = ProductQuantizer::Train(x.data(), n, d, Options(m, center));
    ASSERT_TRUE(pq.ok()) << pq.status().ToString();
    ASSERT_EQ(pq->subspace_dim(0), 15u);
    ASSERT_EQ(pq->subspace_dim(6), 14u);
    const std::size_t nc = 50;
    std::vector<std::uint8_t> codes(nc * m);
    ASSERT_TRUE(pq->Encode(x.data(), nc, codes.data()).ok());
    std::vector<float> dec(nc * d);
    ASSERT_TRUE(pq->Decode(codes.data(), nc, dec.data()).ok());
    for (const Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
      PqDistanceTable table;
      for (std::size_t qi = 0; qi < 20; ++qi) {
        ASSERT_TRUE(pq->ComputeDistanceTable(&q[qi * d], metric, &table).ok());
        for (auto isa : {kernels::Isa::kScalar, kernels::Isa::kAvx2, kernels::Isa::kAvx512}) {
          const PqKernels* k = GetPqKernels(isa);
          if (k == nullptr) continue;
          std::vector<float> got(nc);
          ComputeDistances(*k, table, codes.data(), nc, got.data());
          for (std::size_t i = 0; i < nc; ++i) {
            double want;
            if (metric == Metric::kL2) {
              want = ExactL2(&q[qi * d], &dec[i * d], d);
            } else {
              want = -ExactIp(&q[qi * d], &dec[i * d], d) + (metric == Metric::kCosine ? 1 : 0);
            }
            // Values are ~2,500 (IP) / ~200 (L2): relative float tolerance.
            EXPECT_NEAR(got[i], want, 2e-5 * std::fabs(want) + 1e-3)
                << "center=" << center << " metric=" << MetricName(metric)
                << " isa=" << kernels::IsaName(isa);
          }
          EXPECT_NEAR(ComputeDistance(table, codes.data()), got[0],
                      1e-5 * std::fabs(got[0]) + 1e-4);
        }
      }
    }
  }
}

// Encoding picks, per subspace, the nearest centroid (brute force).
TEST(ProductQuantizer, EncodeIsNearestCentroidPerSubspace) {
  const std::size_t n = 1000, d = 30, m = 4;  // dims 8, 8, 7, 7
  const auto x = ClusteredData(n, d, 20, 6, 3, 4);
  auto pq = ProductQuantizer::Train(x.data(), n, d, Options(m));
  ASSERT_TRUE(pq.ok());
  std::vector<std::uint8_t> codes(n * m);
  ASSERT_TRUE(pq->Encode(x.data(), n, codes.data(), 3).ok());
  std::vector<float> centred(d);
  for (std::size_t i = 0; i < 200; ++i) {
    for (std::size_t j = 0; j < d; ++j) centred[j] = x[i * d + j] - pq->mean()[j];
    for (std::size_t s = 0; s < m; ++s) {
      const std::size_t off = pq->subspace_offset(s), ds = pq->subspace_dim(s);
      double best = std::numeric_limits<double>::infinity();
      for (std::size_t c = 0; c < 256; ++c) {
        best = std::min(best, ExactL2(&centred[off], pq->centroid(s, c), ds));
      }
      const double got = ExactL2(&centred[off], pq->centroid(s, codes[i * m + s]), ds);
      EXPECT_LE(got, best * (1 + 1e-4) + 1e-6);
    }
  }
}

// Encoding a few rows at a time (an insert encodes one) takes its own path
// (exact distances, no BLAS): it must still pick each subspace's nearest
// centroid, and agree with the batched encode except on rounding-level ties.
// Centred and uncentred, plain and OPQ-rotated.
TEST(ProductQuantizer, FewRowEncodeMatchesBatchedEncode) {
  const std::size_t n = 600, d = 30, m = 4;
  const auto x = ClusteredData(n, d, 20, 6, 13, 14);
  for (const int variant : {0, 1, 2}) {
    PqOptions o = Options(m, /*center=*/variant != 1);
    if (variant == 2) o.opq_iterations = 3;
    auto pq = ProductQuantizer::Train(x.data(), n, d, o);
    ASSERT_TRUE(pq.ok()) << pq.status().ToString();
    std::vector<std::uint8_t> batched(n * m), single(n * m), fives(n * m);
    ASSERT_TRUE(pq->Encode(x.data(), n, batched.data(), 2).ok());
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(pq->Encode(&x[i * d], 1, &single[i * m], 1).ok());
    }
    for (std::size_t i = 0; i < n; i += 5) {
      ASSERT_TRUE(pq->Encode(&x[i * d], 5, &fives[i * m], 1).ok());
    }
    EXPECT_EQ(single, fives) << "variant " << variant;
    std::size_t differ = 0;
    for (std::size_t i = 0; i < n * m; ++i) differ += single[i] != batched[i];
    EXPECT_LE(differ, n * m / 1000) << "variant " << variant;
    // Each chosen centroid is the nearest, judged on the decoded distance:
    // decode(single) is no farther from x than decode(batched), row by row.
    std::vector<float> ds(d), db(d);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(pq->Decode(&single[i * m], 1, ds.data()).ok());
      ASSERT_TRUE(pq->Decode(&batched[i * m], 1, db.data()).ok());
      EXPECT_LE(ExactL2(&x[i * d], ds.data(), d),
                ExactL2(&x[i * d], db.data(), d) * (1 + 1e-4) + 1e-6)
          << "variant " << variant << " row " << i;
    }
  }
}

// More subspaces = more bits = lower reconstruction error, by a wide margin
// at each doubling on clustered data (faiss on the same recipe: 29 / 24 / 13
// / 1.8 for m = 4 / 8 / 16 / 32 at d = 64).
TEST(ProductQuantizer, QuantizationErrorFallsAsMGrows) {
  const std::size_t n = 6000, d = 64;
  const auto x = ClusteredData(n, d, 50, 16, 5, 6);
  double prev = std::numeric_limits<double>::infinity();
  for (const std::size_t m : {4, 8, 16, 32}) {
    auto pq = ProductQuantizer::Train(x.data(), n, d, Options(m));
    ASSERT_TRUE(pq.ok());
    const double mse = MeanSquaredError(*pq, x, n);
    EXPECT_LT(mse, 0.9 * prev) << "m=" << m;
    prev = mse;
  }
}

// PQ-only ranking recall@10 on clustered data (n = 10,000, d = 64, 200
// queries). faiss's IndexPQ on the same recipe measures 0.43 / 0.64 / 0.87
// for m = 8 / 16 / 32 (bench/results/quant_pq.md); we require the same band.
TEST(ProductQuantizer, RecallAt10InExpectedRange) {
  const std::size_t n = 10000, d = 64, nq = 200;
  const auto x = ClusteredData(n, d, 50, 16, 7, 8);
  const auto q = ClusteredData(nq, d, 50, 16, 7, 9);
  std::vector<std::vector<std::size_t>> truth(nq);
  for (std::size_t i = 0; i < nq; ++i) {
    std::vector<double> dist(n);
    for (std::size_t j = 0; j < n; ++j) dist[j] = ExactL2(&q[i * d], &x[j * d], d);
    truth[i] = testing::SmallestK(dist, 10);
  }
  struct Band {
    std::size_t m;
    double lo, hi;
  };
  for (const Band band : {Band{8, 0.33, 0.55}, Band{16, 0.54, 0.76}, Band{32, 0.78, 0.95}}) {
    auto pq = ProductQuantizer::Train(x.data(), n, d, Options(band.m));
    ASSERT_TRUE(pq.ok());
    std::vector<std::uint8_t> codes(n * band.m);
    ASSERT_TRUE(pq->Encode(x.data(), n, codes.data()).ok());
    PqDistanceTable table;
    std::vector<float> est(n);
    double recall = 0;
    for (std::size_t i = 0; i < nq; ++i) {
      ASSERT_TRUE(pq->ComputeDistanceTable(&q[i * d], Metric::kL2, &table).ok());
      ComputeDistances(table, codes.data(), n, est.data());
      const auto got = testing::SmallestK(est, 10);
      const std::set<std::size_t> t(truth[i].begin(), truth[i].end());
      for (auto id : got) recall += t.count(id);
    }
    recall /= 10.0 * nq;
    EXPECT_GE(recall, band.lo) << "m=" << band.m;
    EXPECT_LE(recall, band.hi) << "m=" << band.m;
  }
}

// Code sizes from 8 to 192 bytes at d = 768 (dsub 96 down to 4).
TEST(ProductQuantizer, CodeSizesFrom8To192Bytes) {
  const std::size_t n = 600, d = 768;
  const auto x = RandomData(n, d, 10);
  for (const std::size_t m : {8, 192}) {
    PqOptions o = Options(m);
    o.iterations = 4;
    auto pq = ProductQuantizer::Train(x.data(), n, d, o);
    ASSERT_TRUE(pq.ok()) << pq.status().ToString();
    EXPECT_EQ(pq->code_size(), m);
    std::vector<std::uint8_t> code(m);
    ASSERT_TRUE(pq->Encode(x.data(), 1, code.data()).ok());
    std::vector<float> dec(d);
    ASSERT_TRUE(pq->Decode(code.data(), 1, dec.data()).ok());
    PqDistanceTable table;
    ASSERT_TRUE(pq->ComputeDistanceTable(x.data() + d, Metric::kL2, &table).ok());
    const double want = ExactL2(x.data() + d, dec.data(), d);
    EXPECT_NEAR(ComputeDistance(table, code.data()), want, 1e-4 * want);
  }
}

TEST(ProductQuantizer, DeterministicAcrossThreads) {
  const std::size_t n = 1500, d = 24;
  const auto x = ClusteredData(n, d, 10, 6, 11, 12);
  PqOptions o = Options(6);
  o.threads = 1;
  auto a = ProductQuantizer::Train(x.data(), n, d, o);
  o.threads = 4;
  auto b = ProductQuantizer::Train(x.data(), n, d, o);
  o.threads = 2;  // fewer threads than subspaces and more: both schedules
  o.m = 1;
  auto c1 = ProductQuantizer::Train(x.data(), n, d, o);
  o.threads = 1;
  auto c2 = ProductQuantizer::Train(x.data(), n, d, o);
  ASSERT_TRUE(a.ok() && b.ok() && c1.ok() && c2.ok());
  EXPECT_EQ(a->centroids(), b->centroids());
  EXPECT_EQ(a->mean(), b->mean());
  EXPECT_EQ(c1->centroids(), c2->centroids());
  std::vector<std::uint8_t> ca(n * 6), cb(n * 6);
  ASSERT_TRUE(a->Encode(x.data(), n, ca.data(), 1).ok());
  ASSERT_TRUE(a->Encode(x.data(), n, cb.data(), 3).ok());
  EXPECT_EQ(ca, cb);
}

TEST(ProductQuantizer, RejectsBadInput) {
  const auto x = RandomData(300, 8, 13);
  EXPECT_TRUE(ProductQuantizer::Train(x.data(), 300, 8, Options(0)).status().IsInvalidArgument());
  EXPECT_TRUE(ProductQuantizer::Train(x.data(), 300, 8, Options(9)).status().IsInvalidArgument());
  EXPECT_TRUE(ProductQuantizer::Train(x.data(), 255, 8, Options(2)).status().IsInvalidArgument());
  EXPECT_TRUE(ProductQuantizer::Train(nullptr, 300, 8, Options(2)).status().IsInvalidArgument());
  auto bad = x;
  bad[5] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(ProductQuantizer::Train(bad.data(), 300, 8, Options(2)).status().IsInvalidArgument());
  ProductQuantizer empty;
  std::uint8_t code;
  PqDistanceTable table;
  EXPECT_TRUE(empty.Encode(x.data(), 1, &code).IsInvalidArgument());
  EXPECT_TRUE(empty.ComputeDistanceTable(x.data(), Metric::kL2, &table).IsInvalidArgument());
  EXPECT_TRUE(ProductQuantizer::FromParts(4, {0, 2, 2, 4}, {}, std::vector<float>(1024))
                  .status()
                  .IsInvalidArgument());
}

}  // namespace
}  // namespace strata::quant
