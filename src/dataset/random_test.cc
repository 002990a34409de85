// Random streams: distribution of the ziggurat normals (moments, tail mass,
// Kolmogorov-Smirnov distance), uniforms, and seeding.
#include "dataset/random.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_set>
#include <vector>

namespace strata::dataset_internal {
namespace {

TEST(Random, NormalMatchesTheStandardNormal) {
  Rng rng(StreamSeed(42, 1, 0));
  const std::size_t n = 1000000;
  std::vector<double> x(n);
  double s1 = 0, s2 = 0, s4 = 0;
  std::size_t tail = 0;
  for (double& v : x) {
    v = rng.Normal();
    s1 += v;
    s2 += v * v;
    s4 += v * v * v * v;
    tail += std::fabs(v) > 3.6541528853610088;  // the ziggurat's tail region
  }
  const double mean = s1 / n, var = s2 / n - mean * mean, kurt = (s4 / n) / (var * var);
  EXPECT_NEAR(mean, 0.0, 0.005);  // ~5 standard errors
  EXPECT_NEAR(var, 1.0, 0.007);
  EXPECT_NEAR(kurt, 3.0, 0.03);
  // P(|X| > r) = erfc(r / sqrt 2) = 2.58e-4: about 258 +- 16 of 1e6.
  EXPECT_GT(tail, 180u);
  EXPECT_LT(tail, 340u);
  // Kolmogorov-Smirnov distance to Phi; critical value at alpha = 0.001.
  std::sort(x.begin(), x.end());
  double ks = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double cdf = 0.5 * std::erfc(-x[i] / std::sqrt(2.0));
    ks = std::max({ks, std::fabs(cdf - static_cast<double>(i) / n),
                   std::fabs(static_cast<double>(i + 1) / n - cdf)});
  }
  EXPECT_LT(ks, 1.95 / std::sqrt(static_cast<double>(n)));
  // Symmetric: both signs present in the tail.
  EXPECT_LT(x.front(), -3.6541528853610088);
  EXPECT_GT(x.back(), 3.6541528853610088);
}

TEST(Random, UniformAndBelow) {
  Rng rng(7);
  double sum = 0;
  std::vector<int> hist(10, 0);
  for (int i = 0; i < 100000; ++i) {
    const double u = rng.Uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    const std::uint64_t b = rng.Below(10);
    ASSERT_LT(b, 10u);
    ++hist[b];
  }
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
  for (int c : hist) EXPECT_NEAR(c, 10000, 500);
}

TEST(Random, StreamsAreDeterministicAndDistinct) {
  Rng a(StreamSeed(1, 2, 3)), b(StreamSeed(1, 2, 3)), c(StreamSeed(1, 2, 4)),
      d(StreamSeed(2, 2, 3)), e(StreamSeed(1, 3, 3));
  for (int i = 0; i < 100; ++i) {
    const std::uint64_t va = a.Next();
    EXPECT_EQ(va, b.Next());
    EXPECT_NE(va, c.Next());
    EXPECT_NE(va, d.Next());
    EXPECT_NE(va, e.Next());
  }
  std::unordered_set<std::uint64_t> seeds;
  for (std::uint64_t i = 0; i < 100000; ++i) seeds.insert(StreamSeed(9, 1, i));
  EXPECT_EQ(seeds.size(), 100000u);
}

}  // namespace
}  // namespace strata::dataset_internal
