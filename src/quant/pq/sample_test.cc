#include "quant/pq/sample.h"

#include <gtest/gtest.h>

#include <set>

#include "base/random.h"

namespace strata::quant {
namespace {

TEST(SampleRowCount, AppliesEveryBound) {
  EXPECT_EQ(SampleRowCount(1000, 128, 0, 0), 1000u);
  // 128 MiB of d = 128 floats = 262,144 rows.
  EXPECT_EQ(SampleRowCount(1000000, 128, kDefaultMaxSampleBytes, 0), 262144u);
  EXPECT_EQ(SampleRowCount(1000000, 128, kDefaultMaxSampleBytes, 1000), 1000u);
  EXPECT_EQ(SampleRowCount(100, 128, kDefaultMaxSampleBytes, 1000), 100u);
  EXPECT_EQ(SampleRowCount(100, 128, 511, 0), 0u);  // below one row
}

TEST(SampleRows, DistinctSortedInRangeAndDeterministic) {
  const auto a = SampleRows(100000, 5000, 42);
  ASSERT_EQ(a.size(), 5000u);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::set<std::size_t>(a.begin(), a.end()).size(), 5000u);
  EXPECT_LT(a.back(), 100000u);
  EXPECT_EQ(a, SampleRows(100000, 5000, 42));
  EXPECT_NE(a, SampleRows(100000, 5000, 43));
}

TEST(SampleRows, AllRowsWhenSampleCoversCorpus) {
  const auto a = SampleRows(10, 20, 1);
  ASSERT_EQ(a.size(), 10u);
  for (std::size_t i = 0; i < 10; ++i) EXPECT_EQ(a[i], i);
}

// Every row is equally likely: 20,000 draws of 10 out of 50 pick each row
// 4,000 times in expectation (sd ~ 57); a biased sampler (e.g. favouring the
// tail, Floyd's classic bug) lands far outside +-400.
TEST(SampleRows, Uniform) {
  std::vector<int> hits(50, 0);
  for (int t = 0; t < 20000; ++t) {
    for (const std::size_t r : SampleRows(50, 10, 1000 + t)) ++hits[r];
  }
  for (int h : hits) {
    EXPECT_GT(h, 3600);
    EXPECT_LT(h, 4400);
  }
}

TEST(Xoshiro256, BelowIsUniformAndInRange) {
  Xoshiro256 rng(7);
  std::vector<int> hits(7, 0);
  for (int i = 0; i < 70000; ++i) {
    const auto v = rng.Below(7);
    ASSERT_LT(v, 7u);
    ++hits[v];
  }
  for (int h : hits) {
    EXPECT_GT(h, 9500);
    EXPECT_LT(h, 10500);
  }
}

TEST(GatherRows, CopiesSelectedRows) {
  std::vector<float> data(5 * 3);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  std::vector<float> out;
  GatherRows(data.data(), 3, {1, 4}, &out);
  EXPECT_EQ(out, (std::vector<float>{3, 4, 5, 12, 13, 14}));
}

}  // namespace
}  // namespace strata::quant
