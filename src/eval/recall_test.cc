#include <gtest/gtest.h>

#include "strata/eval.h"

namespace strata {
namespace {

GroundTruth Make(std::uint64_t nq, std::uint32_t k, std::vector<VectorId> ids,
                 std::vector<float> d) {
  GroundTruth g;
  g.num_queries = nq;
  g.k = k;
  g.ids = std::move(ids);
  g.distances = std::move(d);
  return g;
}

TEST(Recall, CountsHitsPerQuery) {
  GroundTruth gt = Make(2, 3, {1, 2, 3, 4, 5, 6}, {0.1f, 0.2f, 0.3f, 0.1f, 0.2f, 0.3f});
  GroundTruth res = Make(2, 3, {3, 1, 9, 7, 8, 9}, {});
  auto r = ComputeRecall(res, gt, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->per_query[0], 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(r->per_query[1], 0.0);
  EXPECT_DOUBLE_EQ(r->mean_recall, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(r->min_recall, 0.0);
}

TEST(Recall, TiesWithTheKthNeighbourCount) {
  // True top-2 is {1, 2}; id 3 ties with the 2nd at distance 0.5.
  GroundTruth gt = Make(1, 4, {1, 2, 3, 4}, {0.1f, 0.5f, 0.5f, 0.9f});
  EXPECT_DOUBLE_EQ(ComputeRecall(Make(1, 2, {1, 3}, {}), gt, 2)->mean_recall, 1.0);
  // Id 4 does not tie.
  EXPECT_DOUBLE_EQ(ComputeRecall(Make(1, 2, {1, 4}, {}), gt, 2)->mean_recall, 0.5);
  // A duplicate id is counted once.
  EXPECT_DOUBLE_EQ(ComputeRecall(Make(1, 2, {1, 1}, {}), gt, 2)->mean_recall, 0.5);
}

TEST(Recall, RejectsMismatchedShapes) {
  GroundTruth gt = Make(2, 3, {1, 2, 3, 4, 5, 6}, {});
  EXPECT_FALSE(ComputeRecall(Make(1, 3, {1, 2, 3}, {}), gt, 3).ok());
  EXPECT_FALSE(ComputeRecall(Make(2, 2, {1, 2, 3, 4}, {}), gt, 3).ok());
  EXPECT_FALSE(ComputeRecall(gt, gt, 4).ok());
  EXPECT_FALSE(ComputeRecall(gt, gt, 0).ok());
  EXPECT_DOUBLE_EQ(ComputeRecall(gt, gt, 3)->mean_recall, 1.0);
}

}  // namespace
}  // namespace strata
