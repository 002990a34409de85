#include "graph/streaming_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "base/timer.h"
#include "graph/medoid.h"
#include "graph/test_data.h"

namespace strata::graph {
namespace {

constexpr std::size_t kD = 32;
constexpr std::size_t kN = 4000;
constexpr std::size_t kQueries = 200;
constexpr std::size_t kK = 10;
constexpr std::uint32_t kR = 32;
constexpr std::uint32_t kSearchL = 64;
// At L 64 greedy search over 4000 rows scores about half of them, so recall
// saturates near 1 for any decent graph; L 12 is where graph quality shows.
constexpr std::uint32_t kShortL = 12;
// One mixture (high seed half) for old rows, new rows and queries.
constexpr std::uint64_t kBaseSeed = 42ull << 32 | 1;
constexpr std::uint64_t kQuerySeed = 42ull << 32 | 2;
constexpr std::uint64_t kNewSeed = 42ull << 32 | 3;
constexpr float kCenterScale = 1.0f;

StreamingMergeOptions MergeOptions(Metric metric) {
  return StreamingMergeOptions{
      .metric = metric, .max_degree = kR, .search_list_size = 64, .num_threads = 1, .seed = 7};
}

std::vector<float> Mixture(std::size_t n, std::uint64_t seed, Metric metric) {
  auto rows = testing::GaussianMixture(n, kD, 16, seed, kCenterScale);
  if (metric == Metric::kCosine) testing::NormalizeRows(&rows, kD);
  return rows;
}

// The old index: rows, the graph built over them, queries. Built once per metric.
struct Base {
  std::vector<float> rows;
  std::vector<float> queries;
  VamanaGraph graph;
};

const Base& BaseFor(Metric metric) {
  static std::map<Metric, std::unique_ptr<Base>> cache;
  auto& slot = cache[metric];
  if (!slot) {
    slot = std::make_unique<Base>();
    slot->rows = Mixture(kN, kBaseSeed, metric);
    slot->queries = Mixture(kQueries, kQuerySeed, metric);
    slot->graph = BuildVamana(slot->rows, kD, MergeOptions(metric).BuildOptions()).value();
  }
  return *slot;
}

// Flags `count` distinct rows of n for deletion (seeded), plus `forced` ones.
std::vector<std::uint8_t> DeleteFlags(std::size_t n, std::size_t count, std::uint64_t seed,
                                      std::vector<NodeId> forced = {}) {
  std::vector<NodeId> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937_64 rng(seed);
  for (std::size_t i = n; i > 1; --i) std::swap(ids[i - 1], ids[rng() % i]);
  std::vector<std::uint8_t> flags(n, 0);
  for (std::size_t i = 0; i < count; ++i) flags[ids[i]] = 1;
  for (const NodeId f : forced) flags[f] = 1;
  return flags;
}

// What the merged rows must be: survivors in order, then the new rows.
std::vector<float> ExpectedMerged(const std::vector<float>& old_rows,
                                  const std::vector<std::uint8_t>& deleted,
                                  const std::vector<float>& new_rows) {
  std::vector<float> out;
  for (std::size_t i = 0; i < deleted.size(); ++i) {
    if (!deleted[i])
      out.insert(out.end(), old_rows.begin() + i * kD, old_rows.begin() + (i + 1) * kD);
  }
  out.insert(out.end(), new_rows.begin(), new_rows.end());
  return out;
}

void ExpectWellFormed(const VamanaGraph& g, std::size_t n, std::uint32_t r) {
  ASSERT_EQ(g.size(), n);
  const GraphStats s = g.Stats();
  EXPECT_LE(s.max_degree, r);
  EXPECT_EQ(s.invalid_edges, 0u) << s.ToString();  // every id < merged size: no deleted node
  EXPECT_EQ(s.self_loops, 0u);
  EXPECT_EQ(s.duplicate_edges, 0u);
  EXPECT_EQ(s.unreachable, 0u) << s.ToString();
  EXPECT_EQ(g.adjacency().capacity(), r);  // slack slots released
  EXPECT_GT(s.avg_degree, r / 4.0) << s.ToString();
  EXPECT_LT(g.entry_point(), n);
}

// One merge and the rebuild it is measured against.
struct Outcome {
  VamanaGraph merged;
  std::vector<float> merged_rows;
  StreamingMergeReport report;
  double merged_recall = 0.0;  // at kSearchL
  double rebuilt_recall = 0.0;
  double merged_short = 0.0;  // at kShortL
  double rebuilt_short = 0.0;
  double rebuild_seconds = 0.0;
};

Outcome MergeAndCompare(Metric metric, const std::vector<std::uint8_t>& deleted, std::size_t m,
                        StreamingMergeOptions options) {
  const Base& base = BaseFor(metric);
  const std::vector<float> new_rows = Mixture(m, kNewSeed, metric);
  const std::vector<float> expected = ExpectedMerged(base.rows, deleted, new_rows);
  // Deleted rows may hold anything: poison them to prove they are never read.
  std::vector<float> old_rows = base.rows;
  for (std::size_t i = 0; i < kN; ++i) {
    if (deleted[i]) {
      std::fill_n(old_rows.begin() + i * kD, kD, std::numeric_limits<float>::quiet_NaN());
    }
  }
  Outcome o;
  auto g = StreamingMerge(base.graph, old_rows, deleted, new_rows, kD, options, &o.merged_rows,
                          &o.report);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  if (!g.ok()) return o;
  o.merged = std::move(g).value();
  EXPECT_EQ(o.merged_rows, expected);
  const auto view = VectorView::Create(o.merged_rows, kD, metric).value();
  const auto truth = testing::BruteForceKnn(view, base.queries, kK);
  o.merged_recall = testing::SearchRecall(view, o.merged.adjacency(), o.merged.entry_point(),
                                          base.queries, truth, kK, kSearchL);
  o.merged_short = testing::SearchRecall(view, o.merged.adjacency(), o.merged.entry_point(),
                                         base.queries, truth, kK, kShortL);
  const Timer t;
  auto rebuilt = BuildVamana(o.merged_rows, kD, options.BuildOptions());
  o.rebuild_seconds = t.ElapsedSeconds();
  EXPECT_TRUE(rebuilt.ok());
  if (rebuilt.ok()) {
    o.rebuilt_recall = testing::SearchRecall(view, rebuilt->adjacency(), rebuilt->entry_point(),
                                             base.queries, truth, kK, kSearchL);
    o.rebuilt_short = testing::SearchRecall(view, rebuilt->adjacency(), rebuilt->entry_point(),
                                            base.queries, truth, kK, kShortL);
  }
  std::printf(
      "[merge] metric=%d deleted=%llu inserted=%llu repaired=%llu recall@10 L64 merged=%.4f "
      "rebuilt=%.4f L12 merged=%.4f rebuilt=%.4f | merge %.3fs (delete %.3f insert %.3f patch "
      "%.3f) rebuild %.3fs | "
      "distances merge %llu (delete phase %llu) rebuild %llu\n",
      static_cast<int>(metric), static_cast<unsigned long long>(o.report.deleted),
      static_cast<unsigned long long>(o.report.inserted),
      static_cast<unsigned long long>(o.report.nodes_repaired), o.merged_recall, o.rebuilt_recall,
      o.merged_short, o.rebuilt_short, o.report.seconds_total, o.report.seconds_delete,
      o.report.seconds_insert, o.report.seconds_patch, o.rebuild_seconds,
      static_cast<unsigned long long>(o.report.delete_distance_computations +
                                      o.report.search_distance_computations +
                                      o.report.prune_distance_computations),
      static_cast<unsigned long long>(o.report.delete_distance_computations),
      static_cast<unsigned long long>(rebuilt.ok()
                                          ? rebuilt->build_stats().search_distance_computations +
                                                rebuilt->build_stats().prune_distance_computations
                                          : 0));
  return o;
}

std::size_t Survivors(const std::vector<std::uint8_t>& deleted) {
  return static_cast<std::size_t>(std::count(deleted.begin(), deleted.end(), 0));
}

TEST(StreamingMerge, L2TenPercentDeleteAndInsertMatchesRebuild) {
  const auto deleted = DeleteFlags(kN, kN / 10, 11);
  const Outcome o = MergeAndCompare(Metric::kL2, deleted, kN / 10, MergeOptions(Metric::kL2));
  ExpectWellFormed(o.merged, kN, kR);
  EXPECT_GE(o.merged_recall, 0.95);
  EXPECT_GE(o.merged_recall, o.rebuilt_recall - 0.02);
  EXPECT_GE(o.merged_short, o.rebuilt_short - 0.02);
  EXPECT_EQ(o.report.deleted, kN / 10);
  EXPECT_EQ(o.report.inserted, kN / 10);
  EXPECT_GT(o.report.nodes_repaired, 0u);
  EXPECT_GT(o.report.delete_distance_computations, 0u);
  EXPECT_GT(o.report.search_distance_computations, 0u);
  EXPECT_FALSE(o.report.rebuilt || o.report.copied);
  EXPECT_EQ(o.report.connect.unreachable_after, 0u);
  EXPECT_EQ(o.merged.metric(), Metric::kL2);
  EXPECT_EQ(o.merged.max_degree(), kR);
}

TEST(StreamingMerge, CosineTenPercentDeleteAndInsertMatchesRebuild) {
  const auto deleted = DeleteFlags(kN, kN / 10, 12);
  const Outcome o =
      MergeAndCompare(Metric::kCosine, deleted, kN / 10, MergeOptions(Metric::kCosine));
  ExpectWellFormed(o.merged, kN, kR);
  EXPECT_GE(o.merged_recall, 0.95);
  EXPECT_GE(o.merged_recall, o.rebuilt_recall - 0.02);
  EXPECT_GE(o.merged_short, o.rebuilt_short - 0.02);
}

TEST(StreamingMerge, HalfDeletedStillReachesRecall) {
  const auto deleted = DeleteFlags(kN, kN / 2, 13);
  const Outcome o = MergeAndCompare(Metric::kL2, deleted, kN / 10, MergeOptions(Metric::kL2));
  ExpectWellFormed(o.merged, kN / 2 + kN / 10, kR);
  EXPECT_GE(o.merged_recall, 0.9);
  EXPECT_GE(o.merged_recall, o.rebuilt_recall - 0.02);
  EXPECT_GE(o.merged_short, o.rebuilt_short - 0.03);
}

TEST(StreamingMerge, RepeatedMergesKeepRecall) {
  // Five cycles of 10 % deletes + 10 % inserts, each merge starting from the
  // previous merge's graph: quality must not drift away from a rebuild.
  const Base& base = BaseFor(Metric::kL2);
  const StreamingMergeOptions options = MergeOptions(Metric::kL2);
  std::vector<float> rows = base.rows;
  VamanaGraph graph = StreamingMerge(base.graph, rows, std::vector<std::uint8_t>(kN, 0), {}, kD,
                                     options, nullptr, nullptr)
                          .value();  // a copy: VamanaGraph is move-only
  const std::vector<float> fresh = Mixture(5 * kN / 10, kNewSeed, Metric::kL2);
  for (std::size_t round = 0; round < 5; ++round) {
    const auto deleted = DeleteFlags(graph.size(), graph.size() / 10, 100 + round);
    const std::span<const float> added =
        std::span<const float>(fresh).subspan(round * (kN / 10) * kD, (kN / 10) * kD);
    std::vector<float> merged;
    auto g = StreamingMerge(graph, rows, deleted, added, kD, options, &merged, nullptr);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    graph = std::move(g).value();
    rows = std::move(merged);
  }
  ExpectWellFormed(graph, kN, kR);
  const auto view = VectorView::Create(rows, kD, Metric::kL2).value();
  const auto truth = testing::BruteForceKnn(view, base.queries, kK);
  auto rebuilt = BuildVamana(rows, kD, options.BuildOptions());
  ASSERT_TRUE(rebuilt.ok());
  for (const std::uint32_t l : {kShortL, kSearchL}) {
    const double merged = testing::SearchRecall(view, graph.adjacency(), graph.entry_point(),
                                                base.queries, truth, kK, l);
    const double fresh_recall = testing::SearchRecall(
        view, rebuilt->adjacency(), rebuilt->entry_point(), base.queries, truth, kK, l);
    std::printf("[merge x5] L=%u recall@10 merged=%.4f rebuilt=%.4f\n", l, merged, fresh_recall);
    EXPECT_GE(merged, fresh_recall - 0.02) << "L " << l;
  }
}

TEST(StreamingMerge, MultiThreadedMergeIsWellFormed) {
  StreamingMergeOptions options = MergeOptions(Metric::kL2);
  options.num_threads = 4;  // more threads than cores also exercises preemption inside locks
  const auto deleted = DeleteFlags(kN, kN / 10, 14);
  const Outcome o = MergeAndCompare(Metric::kL2, deleted, kN / 5, options);
  ExpectWellFormed(o.merged, kN - kN / 10 + kN / 5, kR);
  EXPECT_GE(o.merged_recall, o.rebuilt_recall - 0.02);
}

TEST(StreamingMerge, StopRequestAbortsTheMerge) {
  const Base& base = BaseFor(Metric::kL2);
  const auto added = Mixture(kN / 5, kBaseSeed + 99, Metric::kL2);
  std::stop_source stop;
  stop.request_stop();
  StreamingMergeOptions options = MergeOptions(Metric::kL2);
  options.stop = stop.get_token();
  auto g = StreamingMerge(base.graph, base.rows, DeleteFlags(kN, kN / 10, 16), added, kD, options);
  EXPECT_EQ(g.status().code(), StatusCode::kAborted) << g.status().ToString();
}

TEST(StreamingMerge, DeletesOnly) {
  const auto deleted = DeleteFlags(kN, kN / 10, 15);
  const Outcome o = MergeAndCompare(Metric::kL2, deleted, 0, MergeOptions(Metric::kL2));
  ExpectWellFormed(o.merged, kN - kN / 10, kR);
  EXPECT_GE(o.merged_recall, o.rebuilt_recall - 0.02);
  EXPECT_EQ(o.report.inserted, 0u);
  EXPECT_EQ(o.report.search_distance_computations, 0u);
}

TEST(StreamingMerge, InsertsOnly) {
  const std::vector<std::uint8_t> none(kN, 0);
  const Outcome o = MergeAndCompare(Metric::kL2, none, kN / 10, MergeOptions(Metric::kL2));
  ExpectWellFormed(o.merged, kN + kN / 10, kR);
  EXPECT_GE(o.merged_recall, o.rebuilt_recall - 0.02);
  EXPECT_EQ(o.report.nodes_repaired, 0u);
  EXPECT_FALSE(o.report.entry_replaced);
  const Base& base = BaseFor(Metric::kL2);
  EXPECT_EQ(o.merged.entry_point(), base.graph.entry_point());  // numbering unchanged
}

TEST(StreamingMerge, DeletedEntryIsReplacedByTheSurvivorsMedoid) {
  const Base& base = BaseFor(Metric::kL2);
  const NodeId old_entry = base.graph.entry_point();
  const auto deleted = DeleteFlags(kN, kN / 10, 16, {old_entry});
  const Outcome o = MergeAndCompare(Metric::kL2, deleted, kN / 10, MergeOptions(Metric::kL2));
  ExpectWellFormed(o.merged, Survivors(deleted) + kN / 10, kR);
  EXPECT_TRUE(o.report.entry_replaced);
  const std::size_t n_surv = Survivors(deleted);
  const auto surv_view =
      VectorView::Create(std::span<const float>(o.merged_rows).first(n_surv * kD), kD, Metric::kL2)
          .value();
  EXPECT_EQ(o.merged.entry_point(), ComputeMedoid(surv_view, 1));
  EXPECT_GE(o.merged_recall, o.rebuilt_recall - 0.02);
}

TEST(StreamingMerge, EntrySurvivesRenumbered) {
  const Base& base = BaseFor(Metric::kL2);
  const NodeId old_entry = base.graph.entry_point();
  auto deleted = DeleteFlags(kN, kN / 10, 17);
  deleted[old_entry] = 0;
  StreamingMergeReport report;
  auto g = StreamingMerge(base.graph, base.rows, deleted, {}, kD, MergeOptions(Metric::kL2),
                          nullptr, &report);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_FALSE(report.entry_replaced);
  const auto before =
      static_cast<NodeId>(std::count(deleted.begin(), deleted.begin() + old_entry, 0));
  EXPECT_EQ(g->entry_point(), before);
}

TEST(StreamingMerge, AllDeletedIsABuildOverTheNewRows) {
  const Base& base = BaseFor(Metric::kL2);
  const std::vector<std::uint8_t> all(kN, 1);
  const auto new_rows = Mixture(500, kNewSeed, Metric::kL2);
  const StreamingMergeOptions options = MergeOptions(Metric::kL2);
  std::vector<float> merged;
  StreamingMergeReport report;
  auto g = StreamingMerge(base.graph, base.rows, all, new_rows, kD, options, &merged, &report);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(report.rebuilt);
  EXPECT_EQ(report.deleted, kN);
  EXPECT_EQ(report.inserted, 500u);
  EXPECT_EQ(merged, new_rows);
  ExpectWellFormed(*g, 500, kR);
  // Single-threaded builds are deterministic: identical to BuildVamana.
  auto built = BuildVamana(new_rows, kD, options.BuildOptions());
  ASSERT_TRUE(built.ok());
  EXPECT_EQ(g->entry_point(), built->entry_point());
  for (NodeId i = 0; i < g->size(); ++i) {
    const auto a = g->Neighbors(i), b = built->Neighbors(i);
    ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "node " << i;
  }

  // Nothing left at all: an empty graph.
  auto empty = StreamingMerge(base.graph, base.rows, all, {}, kD, options, &merged, &report);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_EQ(empty->entry_point(), kInvalidNode);
  EXPECT_TRUE(merged.empty());
}

TEST(StreamingMerge, NothingToDoReturnsACopy) {
  const Base& base = BaseFor(Metric::kL2);
  const std::vector<std::uint8_t> none(kN, 0);
  std::vector<float> merged;
  StreamingMergeReport report;
  auto g = StreamingMerge(base.graph, base.rows, none, {}, kD, MergeOptions(Metric::kL2), &merged,
                          &report);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_TRUE(report.copied);
  EXPECT_EQ(merged, base.rows);
  ASSERT_EQ(g->size(), base.graph.size());
  EXPECT_EQ(g->entry_point(), base.graph.entry_point());
  for (NodeId i = 0; i < g->size(); ++i) {
    const auto a = g->Neighbors(i), b = base.graph.Neighbors(i);
    ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin(), b.end())) << "node " << i;
  }
}

TEST(StreamingMerge, SmallerMaxDegreePrunesOldLists) {
  const Base& base = BaseFor(Metric::kL2);
  const std::vector<std::uint8_t> none(kN, 0);
  StreamingMergeOptions options = MergeOptions(Metric::kL2);
  options.max_degree = 16;
  StreamingMergeReport report;
  auto g = StreamingMerge(base.graph, base.rows, none, {}, kD, options, nullptr, &report);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_FALSE(report.copied);
  ExpectWellFormed(*g, kN, 16);
}

TEST(StreamingMerge, RejectsBadInput) {
  const Base& base = BaseFor(Metric::kL2);
  const std::vector<std::uint8_t> none(kN, 0);
  const auto new_rows = Mixture(10, kNewSeed, Metric::kL2);
  const StreamingMergeOptions ok = MergeOptions(Metric::kL2);
  auto merge = [&](std::span<const float> old_rows, std::span<const std::uint8_t> deleted,
                   std::span<const float> added, std::size_t dim, const StreamingMergeOptions& o) {
    return StreamingMerge(base.graph, old_rows, deleted, added, dim, o, nullptr, nullptr).status();
  };
  StreamingMergeOptions bad = ok;
  bad.max_degree = 0;
  const Status bad_options = merge(base.rows, none, new_rows, kD, bad);
  EXPECT_TRUE(bad_options.IsInvalidArgument());
  EXPECT_NE(bad_options.message().find("StreamingMergeOptions: max_degree"), std::string::npos)
      << bad_options.ToString();
  EXPECT_TRUE(merge(base.rows, none, new_rows, 0, ok).IsInvalidArgument());
  EXPECT_TRUE(merge(std::span<const float>(base.rows).first(kD * 10), none, new_rows, kD, ok)
                  .IsInvalidArgument());
  EXPECT_TRUE(merge(base.rows, std::span<const std::uint8_t>(none).first(kN - 1), new_rows, kD, ok)
                  .IsInvalidArgument());
  EXPECT_TRUE(merge(base.rows, none, std::span<const float>(new_rows).first(kD + 1), kD, ok)
                  .IsInvalidArgument());
  StreamingMergeOptions ip = ok;
  ip.metric = Metric::kInnerProduct;
  EXPECT_TRUE(merge(base.rows, none, new_rows, kD, ip).IsInvalidArgument());

  // NaN in a new row / a surviving old row is named by its own numbering.
  auto nan_new = new_rows;
  nan_new[3 * kD + 1] = std::numeric_limits<float>::quiet_NaN();
  const Status s1 = merge(base.rows, none, nan_new, kD, ok);
  EXPECT_TRUE(s1.IsInvalidArgument());
  EXPECT_NE(s1.message().find("new row 3 "), std::string::npos) << s1.ToString();
  auto nan_old = base.rows;
  nan_old[77 * kD] = std::numeric_limits<float>::infinity();
  auto deleted = none;
  deleted[5] = 1;
  const Status s2 = merge(nan_old, deleted, new_rows, kD, ok);
  EXPECT_TRUE(s2.IsInvalidArgument());
  EXPECT_NE(s2.message().find("old row 77 "), std::string::npos) << s2.ToString();

  // Cosine: rows must be unit-norm.
  const Base& cos = BaseFor(Metric::kCosine);
  auto not_unit = Mixture(10, kNewSeed, Metric::kCosine);
  for (std::size_t j = 0; j < kD; ++j) not_unit[4 * kD + j] *= 2.0f;
  const Status s3 = StreamingMerge(cos.graph, cos.rows, none, not_unit, kD,
                                   MergeOptions(Metric::kCosine), nullptr, nullptr)
                        .status();
  EXPECT_TRUE(s3.IsInvalidArgument());
  EXPECT_NE(s3.message().find("new row 4 is not unit-norm"), std::string::npos) << s3.ToString();
  // Also when the merge is a rebuild over the new rows.
  const std::vector<std::uint8_t> all(kN, 1);
  const Status s4 = StreamingMerge(cos.graph, cos.rows, all, not_unit, kD,
                                   MergeOptions(Metric::kCosine), nullptr, nullptr)
                        .status();
  EXPECT_TRUE(s4.IsInvalidArgument());
  EXPECT_NE(s4.message().find("new row 4 is not unit-norm"), std::string::npos) << s4.ToString();
}

}  // namespace
}  // namespace strata::graph
