#include "quant/pq/balanced_assign.h"

#include <gtest/gtest.h>

#include "quant/pq/nearest.h"
#include "quant/pq/pq_test_util.h"

namespace strata::quant {
namespace {

using testing::ClusteredData;
using testing::ExactL2;
using testing::RandomData;

std::vector<std::size_t> Counts(const std::vector<std::uint32_t>& labels, std::size_t k) {
  std::vector<std::size_t> c(k, 0);
  for (auto l : labels) ++c[l];
  return c;
}

TEST(AssignBalanced, RespectsCapacity) {
  const std::size_t n = 2000, d = 8, k = 25;
  const auto x = ClusteredData(n, d, 4, 4, 1, 2);  // skewed: a few dense clusters
  const auto c = RandomData(k, d, 3);
  for (const std::size_t cap : {80, 100, 150}) {
    std::vector<std::uint32_t> labels(n);
    std::vector<float> dist(n);
    ASSERT_TRUE(
        AssignBalanced(x.data(), n, d, c.data(), k, cap, labels.data(), dist.data(), 2).ok());
    for (auto cnt : Counts(labels, k)) EXPECT_LE(cnt, cap);
    for (std::size_t i = 0; i < n; ++i) {
      EXPECT_NEAR(dist[i], ExactL2(&x[i * d], &c[labels[i] * d], d), 1e-3);
    }
  }
}

TEST(AssignBalanced, UnboundedCapIsNearest) {
  const std::size_t n = 500, d = 6, k = 12;
  const auto x = RandomData(n, d, 4);
  const auto c = RandomData(k, d, 5);
  std::vector<std::uint32_t> a(n), b(n);
  ASSERT_TRUE(AssignBalanced(x.data(), n, d, c.data(), k, n, a.data(), nullptr, 1).ok());
  ASSERT_TRUE(AssignNearest(x.data(), n, d, c.data(), k, b.data(), nullptr, 1).ok());
  EXPECT_EQ(a, b);
}

// With every centroid as a candidate, deferred acceptance yields a stable
// assignment: no row r and centroid c' with d(r, c') < d(r, label(r)) where
// c' has room or holds a row farther from it than r.
TEST(AssignBalanced, StableWithFullCandidateLists) {
  const std::size_t n = 600, d = 5, k = 10, cap = 70;
  const auto x = ClusteredData(n, d, 3, 3, 6, 7);
  const auto c = RandomData(k, d, 8);
  std::vector<std::uint32_t> labels(n);
  std::vector<float> dist(n);
  ASSERT_TRUE(
      AssignBalanced(x.data(), n, d, c.data(), k, cap, labels.data(), dist.data(), 2, k).ok());
  const auto counts = Counts(labels, k);
  // Farthest member of each centroid.
  std::vector<double> worst(k, -1);
  for (std::size_t i = 0; i < n; ++i) {
    worst[labels[i]] = std::max(worst[labels[i]], ExactL2(&x[i * d], &c[labels[i] * d], d));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const double mine = ExactL2(&x[i * d], &c[labels[i] * d], d);
    for (std::size_t j = 0; j < k; ++j) {
      const double other = ExactL2(&x[i * d], &c[j * d], d);
      if (other >= mine * (1 - 1e-6)) continue;
      EXPECT_EQ(counts[j], cap) << "row " << i << " prefers centroid " << j << " which has room";
      EXPECT_LE(worst[j], other * (1 + 1e-5)) << "row " << i << " and centroid " << j;
    }
  }
}

TEST(AssignBalanced, DeterministicAcrossThreads) {
  const std::size_t n = 1500, d = 8, k = 20;
  const auto x = ClusteredData(n, d, 5, 4, 9, 10);
  const auto c = RandomData(k, d, 11);
  std::vector<std::uint32_t> a(n), b(n);
  ASSERT_TRUE(AssignBalanced(x.data(), n, d, c.data(), k, 80, a.data(), nullptr, 1, 3).ok());
  ASSERT_TRUE(AssignBalanced(x.data(), n, d, c.data(), k, 80, b.data(), nullptr, 3, 3).ok());
  EXPECT_EQ(a, b);
  // 3 candidates are too few for this skew: the fallback scan must still
  // respect the cap.
  for (auto cnt : Counts(a, k)) EXPECT_LE(cnt, 80u);
}

TEST(AssignBalanced, RejectsInsufficientCapacity) {
  const auto x = RandomData(100, 4, 12);
  const auto c = RandomData(3, 4, 13);
  std::vector<std::uint32_t> labels(100);
  EXPECT_TRUE(AssignBalanced(x.data(), 100, 4, c.data(), 3, 33, labels.data(), nullptr)
                  .IsInvalidArgument());
  EXPECT_TRUE(AssignBalanced(x.data(), 100, 4, c.data(), 3, 34, labels.data(), nullptr).ok());
}

}  // namespace
}  // namespace strata::quant
