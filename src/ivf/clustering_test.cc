#include "ivf/clustering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "ivf/ivf_test_util.h"

namespace strata::ivf {
namespace {

TEST(ClusterVectors, OrderIsAPermutationGroupedAndSortedByCentreDistance) {
  const std::size_t n = 6000, d = 16;
  auto rows = testing::ClusteredRows(n, d, 30, 1);
  IvfClusteringOptions opt;
  opt.clusters = 40;
  opt.assign_probe = 1000;  // all coarse groups: exact nearest-centroid assignment
  opt.threads = 2;
  auto r = ClusterVectors(rows.data(), n, d, opt);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->num_clusters, 40u);
  ASSERT_EQ(r->offsets.back(), n);
  std::vector<std::uint32_t> sorted = r->order;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(sorted[i], i);
  for (std::size_t c = 0; c < r->num_clusters; ++c) {
    for (std::uint64_t i = r->offsets[c]; i < r->offsets[c + 1]; ++i) {
      const float* x = rows.data() + static_cast<std::size_t>(r->order[i]) * d;
      const float own = testing::L2(x, r->centroids.data() + c * d, d);
      EXPECT_NEAR(r->center_distance[i], own, 1e-3f * (1 + own));
      if (i > r->offsets[c]) {
        ASSERT_GE(r->center_distance[i], r->center_distance[i - 1]);
      }
      // Nearest centroid (up to float ties).
      for (std::size_t o = 0; o < r->num_clusters; ++o) {
        ASSERT_LE(own, testing::L2(x, r->centroids.data() + o * d, d) * (1 + 1e-4f) + 1e-4f);
      }
    }
  }
}

TEST(ClusterVectors, PageGroupsAreSortedRunsOfTheSameMembers) {
  const std::size_t n = 6000, d = 16, g = 25;
  auto rows = testing::ClusteredRows(n, d, 30, 1);
  IvfClusteringOptions opt;
  opt.clusters = 12;
  opt.threads = 2;
  auto plain = ClusterVectors(rows.data(), n, d, opt);
  opt.page_group = g;
  auto grouped = ClusterVectors(rows.data(), n, d, opt);
  ASSERT_TRUE(plain.ok() && grouped.ok());
  ASSERT_EQ(plain->offsets, grouped->offsets);
  for (std::size_t c = 0; c < grouped->num_clusters; ++c) {
    const auto b = static_cast<std::ptrdiff_t>(grouped->offsets[c]);
    const auto e = static_cast<std::ptrdiff_t>(grouped->offsets[c + 1]);
    // The same members (only their order changes) ...
    std::vector<std::uint32_t> x(plain->order.begin() + b, plain->order.begin() + e);
    std::vector<std::uint32_t> y(grouped->order.begin() + b, grouped->order.begin() + e);
    std::sort(x.begin(), x.end());
    std::sort(y.begin(), y.end());
    ASSERT_EQ(x, y);
    // ... each page-sized run by distance to the centroid, distances aligned.
    for (std::ptrdiff_t i = b; i < e; ++i) {
      const float* row = rows.data() + static_cast<std::size_t>(grouped->order[i]) * d;
      const float own = testing::L2(row, grouped->centroids.data() + c * d, d);
      EXPECT_NEAR(grouped->center_distance[i], own, 1e-3f * (1 + own));
      if ((i - b) % static_cast<std::ptrdiff_t>(g) != 0) {
        ASSERT_GE(grouped->center_distance[i], grouped->center_distance[i - 1]);
      }
    }
  }
}

TEST(ClusterVectors, DefaultCountAndBadInput) {
  EXPECT_EQ(DefaultClusterCount(1000000, 0), 977u);
  EXPECT_EQ(DefaultClusterCount(100, 0), 1u);
  EXPECT_EQ(DefaultClusterCount(10, 50), 10u);
  IvfClusteringOptions opt;
  EXPECT_FALSE(ClusterVectors(nullptr, 0, 4, opt).ok());
  opt.assign_probe = 0;
  std::vector<float> rows(40, 1.0f);
  EXPECT_FALSE(ClusterVectors(rows.data(), 10, 4, opt).ok());
}

}  // namespace
}  // namespace strata::ivf
