#include "graph/connectivity.h"

#include <gtest/gtest.h>

#include <vector>

#include "graph/graph_stats.h"
#include "graph/test_data.h"

namespace strata::graph {
namespace {

TEST(GraphStats, CountsDegreesAndDefects) {
  auto g = FlatAdjacency::Create(5, 4).value();
  const NodeId l0[] = {1, 2};
  const NodeId l1[] = {1, 0, 0};  // self-loop and a duplicate
  const NodeId l2[] = {9};        // invalid id
  g.Set(0, l0);
  g.Set(1, l1);
  g.Set(2, l2);
  const GraphStats s = ComputeGraphStats(g, 0);
  EXPECT_EQ(s.num_nodes, 5u);
  EXPECT_EQ(s.num_edges, 6u);
  EXPECT_DOUBLE_EQ(s.avg_degree, 6.0 / 5.0);
  EXPECT_EQ(s.max_degree, 3u);
  EXPECT_EQ(s.min_degree, 0u);
  EXPECT_EQ(s.zero_degree_nodes, 2u);
  EXPECT_EQ(s.self_loops, 1u);
  EXPECT_EQ(s.duplicate_edges, 1u);
  EXPECT_EQ(s.invalid_edges, 1u);
  EXPECT_EQ(s.unreachable, 2u);  // 3 and 4
  EXPECT_NE(s.ToString().find("unreachable=2"), std::string::npos);

  const auto seen = ReachableFrom(g, 0);
  EXPECT_EQ(seen, (std::vector<std::uint8_t>{1, 1, 1, 0, 0}));
  EXPECT_EQ(ReachableFrom(g, 3), (std::vector<std::uint8_t>{0, 0, 0, 1, 0}));
  EXPECT_EQ(ReachableFrom(g, 7), (std::vector<std::uint8_t>(5, 0)));
}

// A two-cluster set whose graph lost every edge into the second cluster.
TEST(ConnectUnreachable, LinksStrandedNodesWithinDegreeBound) {
  constexpr std::size_t kD = 4;
  constexpr NodeId kN = 40;
  std::vector<float> rows(kN * kD);
  for (NodeId i = 0; i < kN; ++i) {
    for (std::size_t j = 0; j < kD; ++j) {
      rows[i * kD + j] = (i < 20 ? 0.0f : 50.0f) + static_cast<float>((i * 7 + j * 3) % 11);
    }
  }
  const auto view = VectorView::Create(rows, kD, Metric::kL2).value();
  constexpr std::uint32_t kR = 3;
  auto g = FlatAdjacency::Create(kN, kR).value();
  // Cluster A (0..19) is a full-degree ring-ish graph; cluster B (20..39) is
  // a chain with outgoing edges only inside B and no edge from A into B.
  for (NodeId i = 0; i < 20; ++i) {
    g.Append(i, (i + 1) % 20);
    g.Append(i, (i + 2) % 20);
    g.Append(i, (i + 5) % 20);
  }
  for (NodeId i = 20; i + 1 < kN; ++i) g.Append(i, i + 1);
  ASSERT_EQ(ComputeGraphStats(g, 0).unreachable, 20u);

  const ConnectReport r = ConnectUnreachable(&g, 0, view, kR, 16);
  EXPECT_EQ(r.unreachable_before, 20u);
  EXPECT_EQ(r.unreachable_after, 0u);
  // Every A node is full, so linking 20 replaces one edge whose target keeps
  // two other in-edges; the chain then makes 21..39 reachable through 20.
  EXPECT_EQ(r.edges_replaced, 1u);
  EXPECT_EQ(r.edges_added, 0u);
  const GraphStats s = ComputeGraphStats(g, 0);
  EXPECT_EQ(s.unreachable, 0u);
  EXPECT_LE(s.max_degree, kR);
  EXPECT_EQ(s.self_loops, 0u);
  EXPECT_EQ(s.duplicate_edges, 0u);
}

TEST(ConnectUnreachable, PrefersAnyReachableFreeSlotOverReplacing) {
  // 1-D points 0..9 at x = 0..9 (all lists full at R = 2), 10 at x = 100
  // (reachable, empty list), 11 at x = -1 (unreachable, nearest to 0).
  std::vector<float> rows = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 100, -1};
  const auto view = VectorView::Create(rows, 1, Metric::kL2).value();
  auto g = FlatAdjacency::Create(12, 2).value();
  for (NodeId i = 0; i < 8; ++i) {
    g.Append(i, i + 1);
    g.Append(i, i + 2);
  }
  g.Append(8, 9);
  g.Append(8, 10);
  g.Append(9, 10);
  g.Append(9, 0);
  // A list size of 1 scores only 0, 1 and 2, all full; the only free slot
  // among reachable nodes is 10's.
  const ConnectReport r = ConnectUnreachable(&g, 0, view, 2, 1);
  EXPECT_EQ(r.unreachable_before, 1u);
  EXPECT_EQ(r.unreachable_after, 0u);
  EXPECT_EQ(r.edges_added, 1u);
  EXPECT_EQ(r.edges_replaced, 0u);
  EXPECT_TRUE(g.Contains(10, 11));
}

TEST(ConnectUnreachable, AppendsWhenThereIsRoom) {
  const auto rows = testing::GaussianMixture(50, 8, 2, 9ull << 32 | 1);
  const auto view = VectorView::Create(rows, 8, Metric::kL2).value();
  auto g = FlatAdjacency::Create(50, 4).value();
  // 0 -> 1..4 -> 6..9 (5 is not linked); 5 and 10..49 have no in-edges.
  for (NodeId i = 1; i < 5; ++i) g.Append(0, i);
  for (NodeId i = 1; i < 5; ++i) g.Append(i, i + 5);
  const ConnectReport r = ConnectUnreachable(&g, 0, view, 4, 20);
  EXPECT_EQ(r.unreachable_before, 41u);  // 5 and 10..49
  EXPECT_EQ(r.unreachable_after, 0u);
  EXPECT_EQ(r.edges_replaced, 0u);
  EXPECT_EQ(r.edges_added, 41u);  // they have no out-edges: one link each
  const GraphStats s = ComputeGraphStats(g, 0);
  EXPECT_EQ(s.unreachable, 0u);
  EXPECT_LE(s.max_degree, 4u);
  EXPECT_EQ(s.duplicate_edges, 0u);
  // A connected graph is left alone.
  const ConnectReport again = ConnectUnreachable(&g, 0, view, 4, 20);
  EXPECT_EQ(again.unreachable_before, 0u);
  EXPECT_EQ(again.edges_added + again.edges_replaced, 0u);
}

}  // namespace
}  // namespace strata::graph
