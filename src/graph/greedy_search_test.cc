#include "graph/greedy_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "graph/test_data.h"

namespace strata::graph {
namespace {

// n points on a line at x = 0, 1, 2, ... (dim 1).
std::vector<float> Line(std::size_t n) {
  std::vector<float> rows(n);
  for (std::size_t i = 0; i < n; ++i) rows[i] = static_cast<float>(i);
  return rows;
}

FlatAdjacency Chain(NodeId n) {
  auto g = FlatAdjacency::Create(n, 2).value();
  for (NodeId i = 0; i < n; ++i) {
    if (i > 0) g.Append(i, i - 1);
    if (i + 1 < n) g.Append(i, i + 1);
  }
  return g;
}

TEST(GreedySearch, WalksAChainToTheTarget) {
  const auto rows = Line(20);
  const auto view = VectorView::Create(rows, 1, Metric::kL2).value();
  const auto g = Chain(20);
  const float q[1] = {13.2f};
  auto r = GreedySearch(view, g, 0, q, /*list_size=*/1, /*k=*/1);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->ids.size(), 1u);
  EXPECT_EQ(r->ids[0], 13u);
  const float diff = 13.2f - 13.0f;
  EXPECT_EQ(r->distances[0], diff * diff);
  // L = 1 expands 0, 1, ..., 14 (14 is scored and rejected, so the walk stops
  // after expanding 13): 14 hops; every node 0..14 scored once.
  EXPECT_EQ(r->hops, 14u);
  EXPECT_EQ(r->distance_computations, 15u);
}

TEST(GreedySearch, ReturnsSortedTopKWithDistances) {
  const auto rows = Line(20);
  const auto view = VectorView::Create(rows, 1, Metric::kL2).value();
  const auto g = Chain(20);
  const float q[1] = {7.4f};
  auto r = GreedySearch(view, g, 19, q, 4, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ids, (std::vector<NodeId>{7, 8, 6}));
  for (std::size_t i = 0; i < 3; ++i) {
    const float diff = q[0] - rows[r->ids[i]];
    EXPECT_FLOAT_EQ(r->distances[i], diff * diff);
  }
  // k larger than the list: the list is widened to k.
  r = GreedySearch(view, g, 0, q, 1, 5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->ids, (std::vector<NodeId>{7, 8, 6, 9, 5}));
}

TEST(GreedySearch, CompleteGraphGivesExactNeighbours) {
  constexpr std::size_t kN = 300, kD = 16, kK = 10;
  const auto rows = testing::GaussianMixture(kN, kD, 5, 1ull << 32 | 1);
  const auto queries = testing::GaussianMixture(20, kD, 5, 1ull << 32 | 2);
  for (const Metric m : {Metric::kL2, Metric::kInnerProduct}) {
    const auto view = VectorView::Create(rows, kD, m).value();
    auto g = FlatAdjacency::Create(kN, kN - 1).value();
    for (NodeId i = 0; i < kN; ++i) {
      for (NodeId j = 0; j < kN; ++j) {
        if (i != j) g.Append(i, j);
      }
    }
    const auto truth = testing::BruteForceKnn(view, queries, kK);
    EXPECT_DOUBLE_EQ(testing::SearchRecall(view, g, 0, queries, truth, kK, kK), 1.0);
  }
}

TEST(GreedySearch, ReportsExpandedNodesAndVisitedSet) {
  const auto rows = Line(10);
  const auto view = VectorView::Create(rows, 1, Metric::kL2).value();
  const auto g = Chain(10);
  GraphSearcher searcher(view, g);
  std::vector<Neighbor> expanded;
  const NodeId entries[2] = {9, 9};  // duplicates are ignored
  const float q[1] = {6.0f};
  const SearchCounters c = searcher.Search(q, entries, 2, &expanded);
  std::vector<NodeId> order;
  for (const auto& e : expanded) order.push_back(e.id);
  EXPECT_EQ(order, (std::vector<NodeId>{9, 8, 7, 6, 5}));
  EXPECT_EQ(c.hops, 5u);
  EXPECT_EQ(c.distance_computations, 6u);  // 9, 8, 7, 6, 5, 4
  EXPECT_TRUE(searcher.Visited().Contains(4));
  EXPECT_FALSE(searcher.Visited().Contains(3));
  std::vector<NodeId> ids;
  std::vector<float> dists;
  searcher.TopK(10, &ids, &dists);
  EXPECT_EQ(ids, (std::vector<NodeId>{6, 5}));
  EXPECT_EQ(dists, (std::vector<float>{0.0f, 1.0f}));
}

TEST(GreedySearch, RejectsBadArguments) {
  const auto rows = Line(10);
  const auto view = VectorView::Create(rows, 1, Metric::kL2).value();
  const auto g = Chain(10);
  const float q2[2] = {1, 2};
  const float q1[1] = {1};
  EXPECT_TRUE(GreedySearch(view, g, 0, q2, 5, 1).status().IsInvalidArgument());
  EXPECT_TRUE(GreedySearch(view, g, 10, q1, 5, 1).status().IsInvalidArgument());
  EXPECT_TRUE(GreedySearch(view, g, 0, q1, 0, 1).status().IsInvalidArgument());
  EXPECT_TRUE(GreedySearch(view, g, 0, q1, 5, 0).status().IsInvalidArgument());
  const auto g9 = Chain(9);
  EXPECT_TRUE(GreedySearch(view, g9, 0, q1, 5, 1).status().IsInvalidArgument());
}

TEST(VectorView, MetricsAndValidation) {
  const std::vector<float> rows = {1, 2, 3, 4};
  auto l2 = VectorView::Create(rows, 2, Metric::kL2).value();
  auto ip = VectorView::Create(rows, 2, Metric::kInnerProduct).value();
  auto cos = VectorView::Create(rows, 2, Metric::kCosine).value();
  EXPECT_EQ(l2.size(), 2u);
  EXPECT_FLOAT_EQ(l2.Distance(0, 1), 8.0f);
  EXPECT_FLOAT_EQ(ip.Distance(0, 1), -11.0f);
  EXPECT_FLOAT_EQ(cos.Distance(0, 1), 1.0f - 11.0f);
  EXPECT_TRUE(VectorView::Create(rows, 0, Metric::kL2).status().IsInvalidArgument());
  EXPECT_TRUE(VectorView::Create(rows, 3, Metric::kL2).status().IsInvalidArgument());
  EXPECT_TRUE(
      VectorView::Create(rows, 2, static_cast<Metric>(9)).status().IsInvalidArgument());
}

}  // namespace
}  // namespace strata::graph
