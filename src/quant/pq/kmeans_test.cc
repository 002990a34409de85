#include "quant/pq/kmeans.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "quant/pq/nearest.h"
#include "quant/pq/pq_test_util.h"

namespace strata::quant {
namespace {

using testing::ClusteredData;
using testing::ExactL2;
using testing::RandomData;

void ExpectNonIncreasing(const std::vector<double>& obj) {
  for (std::size_t t = 1; t < obj.size(); ++t) {
    // Slack only for float rounding in the sgemm expansion.
    EXPECT_LE(obj[t], obj[t - 1] * (1 + 1e-6)) << "iteration " << t;
  }
}

TEST(KMeans, ObjectiveNonIncreasing) {
  const std::size_t n = 4000, d = 16;
  const auto x = ClusteredData(n, d, 40, 8, 1, 2);
  for (const KMeansInit init : {KMeansInit::kRandomRows, KMeansInit::kKMeansPlusPlus}) {
    KMeansOptions opt;
    opt.k = 50;
    opt.iterations = 15;
    opt.init = init;
    opt.threads = 2;
    auto res = TrainKMeans(x.data(), n, d, opt);
    ASSERT_TRUE(res.ok()) << res.status().ToString();
    ASSERT_EQ(res->objective.size(), 15u);
    ExpectNonIncreasing(res->objective);
    // Lloyd must actually improve on the initial assignment.
    EXPECT_LT(res->objective.back(), 0.95 * res->objective.front());
    // The recorded objective is the true sum of squared distances.
    auto obj = KMeansObjective(x.data(), n, d, res->centroids.data(), opt.k, 2);
    ASSERT_TRUE(obj.ok());
    EXPECT_LE(*obj, res->objective.back() * (1 + 1e-6));
  }
}

TEST(KMeans, IdenticalForSameSeedAnyThreads) {
  const std::size_t n = 3000, d = 12;
  const auto x = RandomData(n, d, 3);
  KMeansOptions opt;
  opt.k = 40;
  opt.iterations = 8;
  opt.seed = 99;
  opt.threads = 1;
  auto a = TrainKMeans(x.data(), n, d, opt);
  opt.threads = 3;
  auto b = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->centroids, b->centroids);
  EXPECT_EQ(a->objective, b->objective);
  opt.seed = 100;
  auto c = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->centroids, c->centroids);
}

// 900 copies of one point plus 100 distinct points: random initial rows are
// mostly copies of the same point, so most clusters start empty (ties go to
// the lowest index) and must be repaired into distinct, non-empty clusters.
TEST(KMeans, RepairsEmptyClusters) {
  const std::size_t d = 8, n = 1000, k = 20;
  auto x = RandomData(n, d, 5);
  for (std::size_t i = 100; i < n; ++i) {
    for (std::size_t j = 0; j < d; ++j) x[i * d + j] = 3.0f;
  }
  KMeansOptions opt;
  opt.k = k;
  opt.iterations = 10;
  opt.threads = 1;
  opt.init = KMeansInit::kRandomRows;
  auto res = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(res.ok());
  EXPECT_GT(res->empty_clusters_repaired, 0u);
  ExpectNonIncreasing(res->objective);
  std::set<std::vector<float>> distinct;
  for (std::size_t c = 0; c < k; ++c) {
    distinct.insert(std::vector<float>(res->centroids.begin() + c * d,
                                       res->centroids.begin() + (c + 1) * d));
  }
  EXPECT_EQ(distinct.size(), k);
  std::vector<std::uint32_t> labels(n);
  ASSERT_TRUE(AssignNearest(x.data(), n, d, res->centroids.data(), k, labels.data(), nullptr, 1)
                  .ok());
  std::vector<int> count(k, 0);
  for (auto l : labels) ++count[l];
  for (std::size_t c = 0; c < k; ++c) EXPECT_GT(count[c], 0) << "cluster " << c;
}

// Well-separated blobs: k-means++ finds every blob centre.
TEST(KMeans, RecoversSeparatedBlobs) {
  const std::size_t d = 10, per = 300, blobs = 8;
  Xoshiro256 rng(17);
  std::vector<float> centres(blobs * d), x;
  for (float& v : centres) v = 20.0f * testing::Gaussian(rng);
  for (std::size_t b = 0; b < blobs; ++b) {
    for (std::size_t i = 0; i < per; ++i) {
      for (std::size_t j = 0; j < d; ++j) x.push_back(centres[b * d + j] + testing::Gaussian(rng));
    }
  }
  KMeansOptions opt;
  opt.k = blobs;
  opt.iterations = 20;
  opt.init = KMeansInit::kKMeansPlusPlus;
  auto res = TrainKMeans(x.data(), blobs * per, d, opt);
  ASSERT_TRUE(res.ok());
  for (std::size_t b = 0; b < blobs; ++b) {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < blobs; ++c) {
      best = std::min(best, ExactL2(&centres[b * d], &res->centroids[c * d], d));
    }
    // The mean of 300 unit-variance points is ~0.06 away per dim.
    EXPECT_LT(best, 0.2) << "blob " << b;
  }
}

TEST(KMeans, SampleBoundedInBytes) {
  const std::size_t n = 5000, d = 16;
  const auto x = RandomData(n, d, 6);
  KMeansOptions opt;
  opt.k = 10;
  opt.iterations = 2;
  opt.max_sample_bytes = 1000 * d * sizeof(float);
  auto res = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->sample_rows, 1000u);
  opt.max_points_per_centroid = 50;
  res = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(res.ok());
  EXPECT_EQ(res->sample_rows, 500u);
  opt.max_sample_bytes = 5 * d * sizeof(float);  // fewer rows than k
  EXPECT_TRUE(TrainKMeans(x.data(), n, d, opt).status().IsInvalidArgument());
}

// Balanced training on very uneven data: its centroids split the dense
// regions, so even plain nearest assignment yields a far smaller largest
// cluster than plain k-means's centroids do.
TEST(KMeans, BalancedTrainingEvensClusterSizes) {
  const std::size_t n = 3000, d = 8, k = 30;
  const auto x = ClusteredData(n, d, 5, 4, 7, 8);
  KMeansOptions opt;
  opt.k = k;
  opt.iterations = 10;
  opt.threads = 2;
  auto plain = TrainKMeans(x.data(), n, d, opt);
  opt.balance_factor = 1.1;
  auto balanced = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(plain.ok() && balanced.ok()) << balanced.status().ToString();
  auto max_size = [&](const std::vector<float>& c) {
    std::vector<std::uint32_t> labels(n);
    EXPECT_TRUE(AssignNearest(x.data(), n, d, c.data(), k, labels.data(), nullptr, 2).ok());
    std::vector<std::size_t> count(k, 0);
    for (auto l : labels) ++count[l];
    return *std::max_element(count.begin(), count.end());
  };
  const std::size_t plain_max = max_size(plain->centroids);
  const std::size_t balanced_max = max_size(balanced->centroids);
  EXPECT_LT(balanced_max, plain_max);
  EXPECT_LT(balanced_max, 2 * n / k);  // mean size is 100
}

TEST(KMeans, ToleranceStopsEarly) {
  const std::size_t n = 2000, d = 4;
  const auto x = RandomData(n, d, 9);
  KMeansOptions opt;
  opt.k = 4;
  opt.iterations = 200;
  opt.tolerance = 1e-3;
  auto res = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(res.ok());
  EXPECT_LT(res->objective.size(), 200u);
}

TEST(KMeans, ZeroIterationsReturnsInitialRows) {
  const std::size_t n = 100, d = 3;
  const auto x = RandomData(n, d, 10);
  KMeansOptions opt;
  opt.k = 5;
  opt.iterations = 0;
  opt.init = KMeansInit::kRandomRows;
  auto res = TrainKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(res.ok());
  EXPECT_TRUE(res->objective.empty());
  for (std::size_t c = 0; c < 5; ++c) {  // every centroid is one of the rows
    bool found = false;
    for (std::size_t i = 0; i < n && !found; ++i) {
      found = ExactL2(&x[i * d], &res->centroids[c * d], d) == 0.0;
    }
    EXPECT_TRUE(found);
  }
}

TEST(KMeans, RejectsBadInput) {
  const auto x = RandomData(100, 4, 11);
  KMeansOptions opt;
  EXPECT_TRUE(TrainKMeans(x.data(), 100, 4, opt).status().IsInvalidArgument());  // k = 0
  opt.k = 101;
  EXPECT_TRUE(TrainKMeans(x.data(), 100, 4, opt).status().IsInvalidArgument());  // k > n
  opt.k = 4;
  EXPECT_TRUE(TrainKMeans(x.data(), 100, 0, opt).status().IsInvalidArgument());
  EXPECT_TRUE(TrainKMeans(nullptr, 100, 4, opt).status().IsInvalidArgument());
  opt.iterations = -1;
  EXPECT_TRUE(opt.Validate().IsInvalidArgument());
  opt.iterations = 5;
  opt.balance_factor = 0.5;
  EXPECT_TRUE(opt.Validate().IsInvalidArgument());
  opt.balance_factor = 0;
  auto bad = x;
  bad[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(TrainKMeans(bad.data(), 100, 4, opt).status().IsInvalidArgument());
}

}  // namespace
}  // namespace strata::quant
