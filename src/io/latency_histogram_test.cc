#include "io/latency_histogram.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace strata {
namespace {

TEST(LatencyHistogram, BucketsTileTheRangeWithBoundedWidth) {
  std::uint64_t expected_low = 0;
  for (std::uint32_t b = 0; b < LatencyHistogram::NumBuckets(); ++b) {
    const std::uint64_t low = LatencyHistogram::BucketLow(b);
    const std::uint64_t high = LatencyHistogram::BucketHigh(b);
    ASSERT_EQ(low, expected_low) << "bucket " << b;
    ASSERT_GE(high, low);
    ASSERT_EQ(LatencyHistogram::BucketOf(low), b);
    ASSERT_EQ(LatencyHistogram::BucketOf(high), b);
    if (low >= 256) {
      ASSERT_LE(static_cast<double>(high - low + 1) / static_cast<double>(low), 1.0 / 128 + 1e-12);
    } else {
      ASSERT_EQ(high, low);  // exact below 256 ns
    }
    expected_low = high + 1;
  }
  EXPECT_EQ(LatencyHistogram::BucketOf(~0ull), LatencyHistogram::NumBuckets() - 1);
}

TEST(LatencyHistogram, PercentilesMatchExactNearestRankWithinHalfAPercent) {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(std::log(80'000.0), 0.6);  // ~80 us I/O latencies
  std::vector<std::uint64_t> values;
  LatencyHistogram h;
  for (int i = 0; i < 20000; ++i) {
    const auto v = static_cast<std::uint64_t>(dist(rng));
    values.push_back(v);
    h.Record(v);
  }
  std::sort(values.begin(), values.end());
  for (double p : {1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0}) {
    const std::size_t rank =
        std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil(p / 100 * values.size())));
    const double exact = static_cast<double>(values[rank - 1]);
    EXPECT_NEAR(h.Percentile(p), exact, exact * 0.005) << "p" << p;
  }
  double sum = 0;
  for (std::uint64_t v : values) sum += static_cast<double>(v);
  EXPECT_DOUBLE_EQ(h.Mean(), sum / values.size());
  EXPECT_EQ(h.count(), values.size());
  EXPECT_EQ(h.Min(), values.front());
  EXPECT_EQ(h.Max(), values.back());
  EXPECT_EQ(h.Percentile(100), static_cast<double>(values.back()));
}

TEST(LatencyHistogram, SmallValuesAreExactAndEmptyIsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.Percentile(50), 0.0);
  EXPECT_EQ(h.Mean(), 0.0);
  for (std::uint64_t v : {5u, 7u, 9u, 200u}) h.Record(v);
  EXPECT_EQ(h.Percentile(50), 7.0);
  EXPECT_EQ(h.Percentile(75), 9.0);
  EXPECT_EQ(h.Percentile(0), 5.0);
  EXPECT_EQ(h.Percentile(100), 200.0);
}

TEST(LatencyHistogram, MergeEqualsRecordingEverythingInOne) {
  LatencyHistogram a, b, all;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 5000; ++i) {
    const std::uint64_t v = rng() % 10'000'000;
    (i % 3 ? a : b).Record(v);
    all.Record(v);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), all.count());
  EXPECT_EQ(a.Mean(), all.Mean());
  EXPECT_EQ(a.Min(), all.Min());
  EXPECT_EQ(a.Max(), all.Max());
  for (double p : {10.0, 50.0, 99.0}) EXPECT_EQ(a.Percentile(p), all.Percentile(p));
}

}  // namespace
}  // namespace strata
