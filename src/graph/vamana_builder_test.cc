#include "graph/vamana_builder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "graph/medoid.h"
#include "graph/test_data.h"

namespace strata::graph {
namespace {

constexpr std::size_t kD = 32;
constexpr std::size_t kN = 8000;
constexpr std::size_t kQueries = 200;
constexpr std::size_t kK = 10;
constexpr std::uint32_t kSearchL = 50;
// Same mixture (high seed half) for base and queries, different draws.
constexpr std::uint64_t kBaseSeed = 42ull << 32 | 1;
constexpr std::uint64_t kQuerySeed = 42ull << 32 | 2;

// Small-graph settings so every build takes well under a second in Release.
VamanaBuildOptions TestOptions(Metric metric) {
  return VamanaBuildOptions{.metric = metric,
                            .max_degree = 32,
                            .search_list_size = 64,
                            .num_threads = 1,
                            .seed = 7};
}

// A dataset, its exact answers and the graph built over it.
struct Built {
  std::vector<float> rows;
  std::vector<float> queries;
  VectorView view;
  std::vector<NodeId> truth;
  VamanaGraph graph;

  double Recall(std::uint32_t list_size = kSearchL) const {
    return testing::SearchRecall(view, graph.adjacency(), graph.entry_point(), queries, truth,
                                 kK, list_size);
  }
};

std::unique_ptr<Built> BuildOn(Metric metric, const VamanaBuildOptions& options,
                               std::size_t n = kN) {
  auto b = std::make_unique<Built>();
  b->rows = testing::GaussianMixture(n, kD, 16, kBaseSeed);
  b->queries = testing::GaussianMixture(kQueries, kD, 16, kQuerySeed);
  if (metric == Metric::kCosine) {
    testing::NormalizeRows(&b->rows, kD);
    testing::NormalizeRows(&b->queries, kD);
  }
  b->view = VectorView::Create(b->rows, kD, metric).value();
  b->truth = testing::BruteForceKnn(b->view, b->queries, kK);
  auto g = BuildVamana(b->rows, kD, options);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (g.ok()) b->graph = std::move(g).value();
  return b;
}

// The default single-thread graph per metric, built once and shared by tests.
const Built& Default(Metric metric) {
  static std::map<Metric, std::unique_ptr<Built>> cache;
  auto& slot = cache[metric];
  if (!slot) slot = BuildOn(metric, TestOptions(metric));
  return *slot;
}

void ExpectWellFormed(const VamanaGraph& g, std::uint32_t r) {
  const GraphStats s = g.Stats();
  EXPECT_LE(s.max_degree, r);
  EXPECT_EQ(s.self_loops, 0u);
  EXPECT_EQ(s.duplicate_edges, 0u);
  EXPECT_EQ(s.invalid_edges, 0u);
  EXPECT_EQ(s.unreachable, 0u) << s.ToString();
  EXPECT_EQ(g.adjacency().capacity(), r);  // slack slots released
  EXPECT_GT(s.avg_degree, r / 4.0) << s.ToString();
}

TEST(BuildVamana, L2GraphHasHighRecallAndIsWellFormed) {
  const Built& b = Default(Metric::kL2);
  ASSERT_EQ(b.graph.size(), kN);
  const double recall = b.Recall();
  EXPECT_GE(recall, 0.95);
  ExpectWellFormed(b.graph, 32);
  EXPECT_EQ(b.graph.metric(), Metric::kL2);
  EXPECT_EQ(b.graph.max_degree(), 32u);
  const BuildStats& st = b.graph.build_stats();
  EXPECT_GT(st.search_distance_computations, 0u);
  EXPECT_GT(st.prune_distance_computations, 0u);
  EXPECT_EQ(st.connect.unreachable_after, 0u);
  EXPECT_GE(st.seconds_total, st.seconds_passes);
  // Recall grows with the search list.
  EXPECT_GE(b.Recall(100), recall);
  EXPECT_LT(b.Recall(10), b.Recall(100));
}

TEST(BuildVamana, InnerProductGraphHasHighRecall) {
  // Raw (unnormalised) mixture rows: the graph is built and searched on
  // -<x,y> directly, without the MIPS->L2 reduction.
  const Built& b = Default(Metric::kInnerProduct);
  EXPECT_GE(b.Recall(), 0.95);
  // Under -<x,y> reverse edges into low-norm (interior) points get pruned
  // away, so many start unreachable; the build links them all back in.
  const ConnectReport& c = b.graph.build_stats().connect;
  EXPECT_GT(c.unreachable_before, 0u);
  EXPECT_EQ(c.unreachable_after, 0u);
  ExpectWellFormed(b.graph, 32);
}

TEST(BuildVamana, CosineGraphHasHighRecall) {
  const Built& b = Default(Metric::kCosine);
  EXPECT_GE(b.Recall(), 0.95);
  ExpectWellFormed(b.graph, 32);
}

TEST(BuildVamana, EntryPointIsTheRowNearestTheCentroid) {
  const Built& b = Default(Metric::kL2);
  const std::vector<float> mean = ComputeCentroid(b.view, 1);
  NodeId best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (NodeId i = 0; i < b.view.size(); ++i) {
    double d = 0;
    for (std::size_t j = 0; j < kD; ++j) {
      const double t = static_cast<double>(b.view.Row(i)[j]) - mean[j];
      d += t * t;
    }
    if (d < best_d) {
      best_d = d;
      best = i;
    }
  }
  EXPECT_EQ(b.graph.entry_point(), best);
  // Thread count does not change the centroid bit-wise.
  EXPECT_EQ(ComputeCentroid(b.view, 1), ComputeCentroid(b.view, 3));
  EXPECT_EQ(ComputeMedoid(b.view, 4), best);
}

TEST(BuildVamana, SingleThreadBuildIsDeterministicForASeed) {
  const auto rows = testing::GaussianMixture(3000, kD, 16, kBaseSeed);
  VamanaBuildOptions o = TestOptions(Metric::kL2);
  auto a = BuildVamana(rows, kD, o);
  auto b = BuildVamana(rows, kD, o);
  o.seed = 8;
  auto c = BuildVamana(rows, kD, o);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  bool all_same = true, c_differs = false;
  for (NodeId i = 0; i < a->size(); ++i) {
    const auto la = a->Neighbors(i), lb = b->Neighbors(i), lc = c->Neighbors(i);
    all_same &= std::equal(la.begin(), la.end(), lb.begin(), lb.end());
    c_differs |= !std::equal(la.begin(), la.end(), lc.begin(), lc.end());
  }
  EXPECT_TRUE(all_same);
  EXPECT_TRUE(c_differs);
  EXPECT_EQ(a->entry_point(), c->entry_point());  // the medoid does not depend on the seed
}

TEST(BuildVamana, MultiThreadedBuildReachesSimilarRecall) {
  VamanaBuildOptions o = TestOptions(Metric::kL2);
  o.num_threads = 4;  // more threads than cores also exercises preemption inside locks
  const auto b = BuildOn(Metric::kL2, o);
  EXPECT_GE(b->Recall(), 0.95);
  EXPECT_GE(b->Recall(), Default(Metric::kL2).Recall() - 0.02);
  ExpectWellFormed(b->graph, 32);
}

TEST(BuildVamana, TwoPassPaperScheduleReachesRecall) {
  VamanaBuildOptions o = TestOptions(Metric::kL2);
  o.num_passes = 2;
  o.alpha_schedule = AlphaSchedule::kFixed;
  const auto b = BuildOn(Metric::kL2, o, 4000);
  EXPECT_GE(b->Recall(), 0.95);
  ExpectWellFormed(b->graph, 32);
}

TEST(BuildVamana, SlackAvoidsMostReverseEdgePrunes) {
  const auto rows = testing::GaussianMixture(3000, kD, 16, kBaseSeed);
  VamanaBuildOptions o = TestOptions(Metric::kL2);
  o.slack_factor = 1.0f;
  auto tight = BuildVamana(rows, kD, o);
  o.slack_factor = 1.3f;
  auto slack = BuildVamana(rows, kD, o);
  ASSERT_TRUE(tight.ok() && slack.ok());
  const auto& t = tight->build_stats();
  const auto& s = slack->build_stats();
  // At exactly R every reverse edge into a full list triggers a prune.
  EXPECT_LT(s.reverse_edge_prunes * 2, t.reverse_edge_prunes)
      << s.reverse_edge_prunes << " vs " << t.reverse_edge_prunes;
  EXPECT_LT(s.prune_distance_computations, t.prune_distance_computations);
}

TEST(BuildVamana, ProgressIsMonotoneAndEndsAtOne) {
  const auto rows = testing::GaussianMixture(2000, kD, 8, kBaseSeed);
  for (const std::uint32_t threads : {1u, 2u}) {
    VamanaBuildOptions o = TestOptions(Metric::kL2);
    o.num_threads = threads;
    o.num_passes = 2;
    std::vector<double> seen;
    auto g = BuildVamana(rows, kD, o, [&](double f) { seen.push_back(f); });
    ASSERT_TRUE(g.ok());
    ASSERT_GE(seen.size(), 10u);
    EXPECT_EQ(seen.back(), 1.0);
    for (std::size_t i = 1; i < seen.size(); ++i) EXPECT_GT(seen[i], seen[i - 1]);
    EXPECT_GE(seen.front(), 0.0);
  }
}

// A stop request ends the build with Aborted at the next chunk of inserts:
// the progress seen after it stays near where it was made.
TEST(BuildVamana, StopRequestAbortsTheBuild) {
  const auto rows = testing::GaussianMixture(4000, kD, 8, kBaseSeed);
  for (const std::uint32_t threads : {1u, 2u}) {
    std::stop_source stop;
    VamanaBuildOptions o = TestOptions(Metric::kL2);
    o.num_threads = threads;
    o.stop = stop.get_token();
    double last = 0;
    auto g = BuildVamana(rows, kD, o, [&](double f) {
      last = f;
      if (f >= 0.2) stop.request_stop();
    });
    EXPECT_EQ(g.status().code(), StatusCode::kAborted) << g.status().ToString();
    EXPECT_LT(last, 0.3) << "threads " << threads;
  }
  std::stop_source stopped;
  stopped.request_stop();
  VamanaBuildOptions o = TestOptions(Metric::kL2);
  o.stop = stopped.get_token();
  EXPECT_EQ(BuildVamana(rows, kD, o).status().code(), StatusCode::kAborted);
}

TEST(BuildVamana, ShardIdsMapLocalToGlobal) {
  const auto rows = testing::GaussianMixture(300, 8, 4, kBaseSeed);
  std::vector<VectorId> ids(300);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = 10'000'000'000ull + 3 * i;
  VamanaBuildOptions o{.max_degree = 8, .search_list_size = 16, .num_threads = 1};
  auto mapped = BuildVamana(rows, 8, o, nullptr, ShardIds{.ids = ids});
  ASSERT_TRUE(mapped.ok());
  EXPECT_EQ(mapped->GlobalId(5), 10'000'000'015ull);
  std::vector<VectorId> global;
  mapped->AppendGlobalNeighbors(5, &global);
  ASSERT_EQ(global.size(), mapped->Neighbors(5).size());
  for (std::size_t k = 0; k < global.size(); ++k) {
    EXPECT_EQ(global[k], ids[mapped->Neighbors(5)[k]]);
  }
  auto offset = BuildVamana(rows, 8, o, nullptr, ShardIds{.offset = 1000});
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(offset->GlobalId(7), 1007u);
  EXPECT_GE(mapped->MemoryBytes(), offset->MemoryBytes() + 300 * sizeof(VectorId));
}

TEST(BuildVamana, TinyInputs) {
  for (const std::size_t n : {1, 2, 3, 9}) {
    const auto rows = testing::GaussianMixture(n, 4, 2, kBaseSeed);
    VamanaBuildOptions o{.max_degree = 4, .search_list_size = 8, .num_threads = 2};
    auto g = BuildVamana(rows, 4, o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_EQ(g->size(), n);
    const GraphStats s = g->Stats();
    EXPECT_EQ(s.unreachable, 0u) << "n=" << n;
    EXPECT_EQ(s.self_loops, 0u);
    EXPECT_LE(s.max_degree, std::min<std::size_t>(4, n - 1));
    // Every node is found as its own nearest neighbour.
    for (NodeId i = 0; i < n; ++i) {
      auto r = GreedySearch(*g, VectorView::Create(rows, 4, Metric::kL2).value(),
                            std::span<const float>(rows.data() + i * 4, 4), 8, 1);
      ASSERT_TRUE(r.ok());
      EXPECT_EQ(r->ids[0], i);
    }
  }
}

TEST(BuildVamana, RejectsBadInput) {
  auto rows = testing::GaussianMixture(100, 4, 2, kBaseSeed);
  const VamanaBuildOptions ok{.max_degree = 8, .search_list_size = 16, .num_threads = 1};
  EXPECT_TRUE(BuildVamana(rows, 0, ok).status().IsInvalidArgument());
  EXPECT_TRUE(BuildVamana(rows, 3, ok).status().IsInvalidArgument());
  EXPECT_TRUE(BuildVamana({}, 4, ok).status().IsInvalidArgument());
  EXPECT_TRUE(BuildVamana(rows, 4, VamanaBuildOptions{.max_degree = 0}).status().IsInvalidArgument());
  const std::vector<VectorId> ids(99);
  EXPECT_TRUE(BuildVamana(rows, 4, ok, nullptr, ShardIds{.ids = ids}).status().IsInvalidArgument());
  VamanaBuildOptions cosine = ok;
  cosine.metric = Metric::kCosine;
  const Status not_unit = BuildVamana(rows, 4, cosine).status();
  EXPECT_TRUE(not_unit.IsInvalidArgument());
  EXPECT_NE(not_unit.message().find("row 0"), std::string::npos) << not_unit.ToString();
  rows[57 * 4 + 2] = std::numeric_limits<float>::quiet_NaN();
  const Status nan = BuildVamana(rows, 4, ok).status();
  EXPECT_TRUE(nan.IsInvalidArgument());
  EXPECT_NE(nan.message().find("row 57"), std::string::npos) << nan.ToString();
}

TEST(VamanaGraph, FromPartsValidatesAndSearches) {
  const Built& b = Default(Metric::kL2);
  // Copy the built adjacency into a fresh array and reassemble it.
  auto adj = FlatAdjacency::Create(b.graph.size(), 32).value();
  for (NodeId i = 0; i < b.graph.size(); ++i) adj.Set(i, b.graph.Neighbors(i));
  auto g = VamanaGraph::FromParts(std::move(adj), b.graph.entry_point(), Metric::kL2, 32);
  ASSERT_TRUE(g.ok());
  const std::span<const float> q(b.queries.data(), kD);
  auto r1 = GreedySearch(*g, b.view, q, kSearchL, kK);
  auto r2 = GreedySearch(b.graph, b.view, q, kSearchL, kK);
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(r1->ids, r2->ids);
  EXPECT_EQ(r1->hops, r2->hops);
  EXPECT_GT(r1->hops, 0u);
  const auto ip_view = VectorView::Create(b.rows, kD, Metric::kInnerProduct).value();
  EXPECT_TRUE(GreedySearch(*g, ip_view, q, kSearchL, kK).status().IsInvalidArgument());

  auto small = FlatAdjacency::Create(3, 2).value();
  const NodeId two[2] = {1, 2};
  small.Set(0, two);
  EXPECT_TRUE(VamanaGraph::FromParts(FlatAdjacency::Create(3, 2).value(), 3, Metric::kL2, 2)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(
      VamanaGraph::FromParts(std::move(small), 0, Metric::kL2, 1).status().IsInvalidArgument());
  const std::vector<VectorId> ids(2);
  EXPECT_TRUE(VamanaGraph::FromParts(FlatAdjacency::Create(3, 2).value(), 0, Metric::kL2, 2,
                                     ShardIds{.ids = ids})
                  .status()
                  .IsInvalidArgument());
}

}  // namespace
}  // namespace strata::graph
