#include "quant/pq/hierarchical_kmeans.h"

#include <gtest/gtest.h>

#include "quant/pq/nearest.h"
#include "quant/pq/pq_test_util.h"

namespace strata::quant {
namespace {

using testing::ClusteredData;

TEST(HierarchicalKMeans, ShapesAndApportionment) {
  const std::size_t n = 6000, d = 16, k = 300;
  const auto x = ClusteredData(n, d, 60, 8, 1, 2);
  KMeansOptions opt;
  opt.k = k;
  opt.iterations = 8;
  opt.threads = 2;
  HierarchicalOptions shape;
  shape.refine_iterations = 0;  // coarse centroids as the groups were formed
  auto h = TrainHierarchicalKMeans(x.data(), n, d, opt, shape);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->k, k);
  EXPECT_EQ(h->centroids.size(), k * d);
  EXPECT_LE(h->coarse_k(), 17u);  // round(sqrt(300)) = 17, empty groups dropped
  EXPECT_GE(h->coarse_k(), 10u);
  EXPECT_EQ(h->group_offsets.front(), 0u);
  EXPECT_EQ(h->group_offsets.back(), k);
  for (std::size_t g = 0; g < h->coarse_k(); ++g) {
    EXPECT_LT(h->group_offsets[g], h->group_offsets[g + 1]) << "empty group " << g;
  }
  // Apportionment follows group sizes: groups' fine centroid counts are
  // proportional to the rows their coarse centroid attracts.
  std::vector<std::uint32_t> coarse(n);
  ASSERT_TRUE(AssignNearest(x.data(), n, d, h->coarse_centroids.data(), h->coarse_k(),
                            coarse.data(), nullptr, 2)
                  .ok());
  std::vector<double> rows(h->coarse_k(), 0);
  for (auto c : coarse) rows[c] += 1;
  for (std::size_t g = 0; g < h->coarse_k(); ++g) {
    const double share = rows[g] / n * k;
    const double got = h->group_offsets[g + 1] - h->group_offsets[g];
    EXPECT_NEAR(got, share, 1.5 + 0.05 * share) << "group " << g;
  }
}

// Two-level training costs ~sqrt(k) less but should land close to flat
// k-means in objective (on clustered data typically within a few percent).
TEST(HierarchicalKMeans, ObjectiveCloseToFlat) {
  const std::size_t n = 8000, d = 16, k = 256;
  const auto x = ClusteredData(n, d, 80, 8, 3, 4);
  KMeansOptions opt;
  opt.k = k;
  opt.iterations = 10;
  opt.threads = 2;
  auto flat = TrainKMeans(x.data(), n, d, opt);
  auto h = TrainHierarchicalKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(flat.ok() && h.ok());
  auto flat_obj = KMeansObjective(x.data(), n, d, flat->centroids.data(), k, 2);
  auto h_obj = KMeansObjective(x.data(), n, d, h->centroids.data(), k, 2);
  ASSERT_TRUE(flat_obj.ok() && h_obj.ok());
  EXPECT_LT(*h_obj, 1.05 * *flat_obj);
  // The model's objective (last refinement's assignment) bounds the exact
  // objective of its final centroids only loosely (centroids moved since);
  // without refinement, within-group assignment bounds it from above.
  HierarchicalOptions no_refine;
  no_refine.refine_iterations = 0;
  auto h0 = TrainHierarchicalKMeans(x.data(), n, d, opt, no_refine);
  ASSERT_TRUE(h0.ok());
  auto h0_obj = KMeansObjective(x.data(), n, d, h0->centroids.data(), k, 2);
  ASSERT_TRUE(h0_obj.ok());
  EXPECT_LE(*h0_obj, h0->objective * (1 + 1e-6));
  // Refinement pulls the objective towards flat k-means.
  EXPECT_LT(*h_obj, *h0_obj);
}

TEST(HierarchicalKMeans, AssignExactWithFullProbe) {
  const std::size_t n = 3000, d = 12, k = 100;
  const auto x = ClusteredData(n, d, 30, 6, 5, 6);
  KMeansOptions opt;
  opt.k = k;
  opt.iterations = 5;
  auto h = TrainHierarchicalKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(h.ok());
  const auto q = ClusteredData(500, d, 30, 6, 5, 7);
  std::vector<std::uint32_t> exact(500), full(500), one(500);
  std::vector<float> dexact(500), dfull(500), done(500);
  ASSERT_TRUE(AssignNearest(q.data(), 500, d, h->centroids.data(), k, exact.data(),
                            dexact.data(), 2)
                  .ok());
  ASSERT_TRUE(AssignHierarchical(*h, q.data(), 500, h->coarse_k(), full.data(), dfull.data(), 2)
                  .ok());
  ASSERT_TRUE(AssignHierarchical(*h, q.data(), 500, 1, one.data(), done.data(), 2).ok());
  EXPECT_EQ(full, exact);
  EXPECT_EQ(dfull, dexact);
  std::size_t agree = 0;
  for (std::size_t i = 0; i < 500; ++i) {
    EXPECT_GE(done[i], dexact[i]);  // a restricted search can only do worse
    agree += one[i] == exact[i];
  }
  EXPECT_GT(agree, 350u);  // the nearest coarse cluster usually holds the answer
}

TEST(HierarchicalKMeans, DeterministicAcrossThreads) {
  const std::size_t n = 3000, d = 8, k = 64;
  const auto x = ClusteredData(n, d, 20, 4, 8, 9);
  KMeansOptions opt;
  opt.k = k;
  opt.iterations = 5;
  opt.threads = 1;
  auto a = TrainHierarchicalKMeans(x.data(), n, d, opt);
  opt.threads = 3;
  auto b = TrainHierarchicalKMeans(x.data(), n, d, opt);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->centroids, b->centroids);
  EXPECT_EQ(a->group_offsets, b->group_offsets);
}

TEST(HierarchicalKMeans, RejectsBadInput) {
  const auto x = ClusteredData(100, 4, 5, 2, 1, 1);
  KMeansOptions opt;
  opt.k = 200;
  EXPECT_TRUE(TrainHierarchicalKMeans(x.data(), 100, 4, opt).status().IsInvalidArgument());
  opt.k = 10;
  HierarchicalOptions shape;
  shape.refine_probe = 0;
  EXPECT_TRUE(
      TrainHierarchicalKMeans(x.data(), 100, 4, opt, shape).status().IsInvalidArgument());
  HierarchicalKMeans empty;
  std::uint32_t l;
  EXPECT_TRUE(AssignHierarchical(empty, x.data(), 1, 1, &l, nullptr).IsInvalidArgument());
}

}  // namespace
}  // namespace strata::quant
