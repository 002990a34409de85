#include "ivf/coarse_quantizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "ivf/ivf_test_util.h"

namespace strata::ivf {
namespace {

std::vector<std::uint32_t> BruteForce(const std::vector<float>& cents, std::size_t d,
                                      const float* q, std::size_t nprobe, Metric metric) {
  std::vector<std::pair<float, std::uint32_t>> all;
  for (std::size_t c = 0; c * d < cents.size(); ++c) {
    float ip = 0;
    for (std::size_t j = 0; j < d; ++j) ip += q[j] * cents[c * d + j];
    all.emplace_back(metric == Metric::kInnerProduct ? -ip : testing::L2(q, &cents[c * d], d),
                     static_cast<std::uint32_t>(c));
  }
  std::sort(all.begin(), all.end());
  std::vector<std::uint32_t> out;
  for (std::size_t i = 0; i < nprobe; ++i) out.push_back(all[i].second);
  return out;
}

TEST(CoarseQuantizer, FlatIsExact) {
  const std::size_t c = 300, d = 24;
  auto cents = testing::ClusteredRows(c, d, 10, 2);
  auto queries = testing::ClusteredRows(20, d, 10, 3);
  for (Metric m : {Metric::kL2, Metric::kInnerProduct}) {
    auto q = CoarseQuantizer::Build(cents.data(), c, d, m, CoarseKind::kFlat, 1);
    ASSERT_TRUE(q.ok());
    CoarseScratch s;
    std::vector<CoarseHit> hits;
    for (std::size_t i = 0; i < 20; ++i) {
      q->Search(&queries[i * d], 7, &s, &hits);
      ASSERT_EQ(hits.size(), 7u);
      const auto want = BruteForce(cents, d, &queries[i * d], 7, m);
      for (std::size_t j = 0; j < 7; ++j) EXPECT_EQ(hits[j].cluster, want[j]);
      EXPECT_NEAR(hits[0].l2 * hits[0].l2, testing::L2(&queries[i * d], &cents[want[0] * d], d),
                  1e-2f);
    }
  }
}

TEST(CoarseQuantizer, IrqFindsNearlyAllNearestClustersAndRoundTrips) {
  const std::size_t c = 2600, d = 32;  // G = 3 inner groups
  auto cents = testing::ClusteredRows(c, d, 40, 4);
  auto queries = testing::ClusteredRows(50, d, 40, 5);
  auto q = CoarseQuantizer::Build(cents.data(), c, d, Metric::kL2, CoarseKind::kIrq, 7, 2);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->num_groups(), 3u);
  std::vector<std::uint8_t> blob;
  q->Serialize(&blob);
  auto back = CoarseQuantizer::Deserialize(blob, cents.data(), c, d);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  CoarseScratch s;
  std::vector<CoarseHit> hits, hits2;
  std::size_t found = 0, total = 0;
  for (std::size_t i = 0; i < 50; ++i) {
    q->Search(&queries[i * d], 16, &s, &hits);
    back->Search(&queries[i * d], 16, &s, &hits2);
    ASSERT_EQ(hits.size(), 16u);
    for (std::size_t j = 0; j < 16; ++j) {
      EXPECT_EQ(hits[j].cluster, hits2[j].cluster);
      if (j > 0) {
        EXPECT_LE(hits[j - 1].distance, hits[j].distance);
      }
    }
    const auto want = BruteForce(cents, d, &queries[i * d], 16, Metric::kL2);
    std::set<std::uint32_t> got;
    for (const auto& h : hits) got.insert(h.cluster);
    for (std::uint32_t w : want) found += got.count(w);
    total += 16;
  }
  EXPECT_GE(static_cast<double>(found) / total, 0.95);
  // Damage: truncation and shape mismatch are reported.
  EXPECT_FALSE(
      CoarseQuantizer::Deserialize(std::span(blob).first(blob.size() - 3), cents.data(), c, d)
          .ok());
  EXPECT_FALSE(CoarseQuantizer::Deserialize(blob, cents.data(), c - 1, d).ok());
}

TEST(CoarseQuantizer, FewerClustersThanProbes) {
  const std::size_t c = 5, d = 8;
  auto cents = testing::ClusteredRows(c, d, 5, 6);
  auto q = CoarseQuantizer::Build(cents.data(), c, d, Metric::kL2, CoarseKind::kIrq, 1);
  ASSERT_TRUE(q.ok());
  CoarseScratch s;
  std::vector<CoarseHit> hits;
  q->Search(cents.data(), 20, &s, &hits);
  ASSERT_EQ(hits.size(), 5u);
  EXPECT_EQ(hits[0].cluster, 0u);
}

}  // namespace
}  // namespace strata::ivf
