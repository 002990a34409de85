#include "base/stats.h"

#include <gtest/gtest.h>

#include "base/parallel.h"

namespace strata {
namespace {

TEST(Stats, PercentileInterpolates) {
  std::vector<double> v{5, 1, 3, 2, 4};
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 3);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 5);
  EXPECT_DOUBLE_EQ(Percentile(v, 25), 2);
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(Mean(v), 3);
}

TEST(Stats, RssIsReported) {
  EXPECT_GT(PeakRssBytes(), 0u);
  EXPECT_GE(PeakRssBytes(), CurrentRssBytes());
}

TEST(Parallel, CoversEveryIndexOnce) {
  std::vector<int> hits(10007, 0);
  ParallelFor(hits.size(), 3, [&](std::size_t i, unsigned) { hits[i]++; }, 13);
  for (int h : hits) ASSERT_EQ(h, 1);
}

}  // namespace
}  // namespace strata
