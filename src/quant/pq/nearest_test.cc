#include "quant/pq/nearest.h"

#include <gtest/gtest.h>

#include <limits>

#include "quant/pq/pq_kernels.h"
#include "quant/pq/pq_test_util.h"

namespace strata::quant {
namespace {

using testing::ExactL2;
using testing::RandomData;

// k = 1500 spans two centroid blocks and n = 300 is not a multiple of the
// row tile, so every tiling edge is exercised.
TEST(AssignNearest, MatchesBruteForce) {
  const std::size_t n = 300, d = 37, k = 1500;
  const auto x = RandomData(n, d, 1);
  const auto c = RandomData(k, d, 2);
  std::vector<std::uint32_t> labels(n);
  std::vector<float> dist(n);
  ASSERT_TRUE(AssignNearest(x.data(), n, d, c.data(), k, labels.data(), dist.data(), 2).ok());
  for (std::size_t i = 0; i < n; ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < k; ++j) best = std::min(best, ExactL2(&x[i * d], &c[j * d], d));
    const double got = ExactL2(&x[i * d], &c[labels[i] * d], d);
    // The sgemm expansion may swap near-ties only.
    EXPECT_LE(got, best * (1 + 1e-5) + 1e-6) << "row " << i;
    EXPECT_NEAR(dist[i], got, 1e-4 * got + 1e-6);
  }
}

TEST(AssignNearest, IndependentOfThreadCount) {
  const std::size_t n = 1000, d = 16, k = 64;
  const auto x = RandomData(n, d, 3);
  const auto c = RandomData(k, d, 4);
  std::vector<std::uint32_t> l1(n), l2(n);
  std::vector<float> d1(n), d2(n);
  ASSERT_TRUE(AssignNearest(x.data(), n, d, c.data(), k, l1.data(), d1.data(), 1).ok());
  ASSERT_TRUE(AssignNearest(x.data(), n, d, c.data(), k, l2.data(), d2.data(), 3).ok());
  EXPECT_EQ(l1, l2);
  EXPECT_EQ(d1, d2);
}

TEST(AssignNearest, TiesGoToLowestIndex) {
  const std::size_t d = 4;
  const std::vector<float> c = {1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0};  // c0 == c2
  const std::vector<float> x = {1, 0, 0, 0};
  std::uint32_t label = 99;
  ASSERT_TRUE(AssignNearest(x.data(), 1, d, c.data(), 3, &label, nullptr, 1).ok());
  EXPECT_EQ(label, 0u);
}

TEST(AssignNearest, RejectsBadArguments) {
  std::vector<float> x(8), c(8);
  std::uint32_t l[2];
  EXPECT_TRUE(AssignNearest(x.data(), 2, 0, c.data(), 2, l, nullptr).IsInvalidArgument());
  EXPECT_TRUE(AssignNearest(x.data(), 2, 4, c.data(), 0, l, nullptr).IsInvalidArgument());
  EXPECT_TRUE(AssignNearest(nullptr, 2, 4, c.data(), 2, l, nullptr).IsInvalidArgument());
  EXPECT_TRUE(AssignNearest(x.data(), 2, 4, nullptr, 2, l, nullptr).IsInvalidArgument());
  EXPECT_TRUE(AssignNearest(nullptr, 0, 4, c.data(), 2, nullptr, nullptr).ok());
}

TEST(AssignTopK, MatchesBruteForceOrder) {
  const std::size_t n = 200, d = 24, k = 1100, t = 7;
  const auto x = RandomData(n, d, 5);
  const auto c = RandomData(k, d, 6);
  std::vector<std::uint32_t> labels(n * t);
  std::vector<float> dist(n * t);
  ASSERT_TRUE(
      AssignTopK(x.data(), n, d, c.data(), k, t, labels.data(), dist.data(), 2).ok());
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> all(k);
    for (std::size_t j = 0; j < k; ++j) all[j] = ExactL2(&x[i * d], &c[j * d], d);
    const auto ref = testing::SmallestK(all, t);
    for (std::size_t s = 0; s < t; ++s) {
      // Compare distances (robust to near-tie swaps), and ascending order.
      EXPECT_NEAR(dist[i * t + s], all[ref[s]], 1e-4 * all[ref[s]] + 1e-6);
      if (s > 0) {
        EXPECT_LE(dist[i * t + s - 1], dist[i * t + s]);
      }
    }
  }
  EXPECT_TRUE(AssignTopK(x.data(), n, d, c.data(), k, 0, labels.data(), dist.data())
                  .IsInvalidArgument());
  EXPECT_TRUE(AssignTopK(x.data(), n, d, c.data(), 5, 6, labels.data(), dist.data())
                  .IsInvalidArgument());
}

TEST(CentroidSearcher, StridedRowsMatchContiguous) {
  // Rows read with a stride (PQ encodes subspace columns in place).
  const std::size_t n = 150, d = 10, k = 20;
  const auto wide = RandomData(n, 3 * d, 7);
  const auto c = RandomData(k, d, 8);
  std::vector<float> narrow(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) narrow[i * d + j] = wide[i * 3 * d + d + j];
  }
  const CentroidSearcher s(c.data(), k, d);
  CentroidSearcher::Scratch scratch;
  std::vector<std::uint32_t> a(n), b(n);
  s.Nearest(wide.data() + d, 3 * d, n, a.data(), nullptr, &scratch);
  s.Nearest(narrow.data(), d, n, b.data(), nullptr, &scratch);
  EXPECT_EQ(a, b);
}

}  // namespace
}  // namespace strata::quant
