// Search over the decoupled layout (OpenOptions::decoupled_dir) of packed
// and page-shuffled graph indexes: recall against exact ground truth, exact
// distances, the filter, the re-rank's group rule, bad parameters, and
// damaged files reported as Corruption.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "format/edge_file.h"
#include "scratch_dir.h"
#include "strata/eval.h"
#include "strata/graph_index.h"
#include "synthetic_dataset.h"

namespace strata {
namespace {

constexpr std::uint64_t kRows = 4000;
constexpr std::uint32_t kDim = 24;

struct Built {
  testutil::TestDataset data;
  std::string index, layout;
};

void Build(const testutil::ScratchDir& dir, Metric metric, bool shuffle, Built* out,
           bool shuffle_edges = false, bool vectors_in_pages = false) {
  out->data = testutil::MakeTestDataset(dir, metric, ElementType::kFloat32, kRows, kDim, 40, 9);
  GraphBuildOptions b;
  b.metric = metric;
  b.R = 24;
  b.L = 48;
  b.threads = 2;
  b.page_shuffle = shuffle;
  b.mem_graph_ratio = shuffle ? 0.02 : 0.0;
  out->index = dir.File("idx");
  out->layout = dir.File("decoupled");
  auto report = BuildGraphIndex(out->data.base, out->index, b);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::filesystem::create_directories(out->layout);
  auto split = WriteDecoupledLayout(
      out->index, out->layout,
      {.shuffle = shuffle_edges, .threads = 2, .vectors_in_edge_pages = vectors_in_pages});
  ASSERT_TRUE(split.ok()) << split.status().ToString();
}

// Exact distance of `q` to base row `id` under `metric`.
float Exact(Metric metric, std::span<const float> q, std::span<const float> x) {
  double dot = 0, qq = 0, xx = 0, l2 = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    dot += q[i] * x[i];
    qq += q[i] * q[i];
    xx += x[i] * x[i];
    l2 += (q[i] - x[i]) * (q[i] - x[i]);
  }
  if (metric == Metric::kL2) return static_cast<float>(l2);
  if (metric == Metric::kInnerProduct) return static_cast<float>(-dot);
  return static_cast<float>(1.0 - dot / std::sqrt(qq * xx));
}

struct Case {
  Metric metric;
  bool shuffle;
  bool shuffle_edges = false;
};

class DecoupledSearch : public ::testing::TestWithParam<Case> {};

TEST_P(DecoupledSearch, ReachesExactRecallWithExactDistances) {
  testutil::ScratchDir dir;
  const Case c = GetParam();
  Built b;
  Build(dir, c.metric, c.shuffle, &b, c.shuffle_edges);
  auto index = GraphIndex::Open(b.index, {.decoupled_dir = b.layout});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_NE((*index)->Describe().find("decoupled"), std::string::npos);
  EXPECT_FALSE((*index)->ranks_restricted());
  auto queries = ReadVectorsAsFloat(b.data.queries);
  auto base = ReadVectorsAsFloat(b.data.base);
  ASSERT_TRUE(queries.ok() && base.ok());
  double speculative_reads = 0, full_reads = 0;
  for (std::uint32_t group : {0u, 8u}) {
    SearchParams p;
    p.k = 10;
    p.list_size = 64;
    p.rerank_group = group;
    auto r = SearchBatch(**index, *queries, p, 2);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    auto recall = ComputeRecall(r->results, b.data.gt, 10);
    ASSERT_TRUE(recall.ok());
    EXPECT_GE(recall->mean_recall, group == 0 ? 0.97 : 0.93) << "group " << group;
    for (std::uint64_t q = 0; q < queries->rows(); ++q) {
      std::set<VectorId> seen;
      float previous = -1e30f;
      for (std::uint32_t i = 0; i < 10; ++i) {
        const VectorId id = r->results.ids[q * 10 + i];
        ASSERT_LT(id, kRows);
        ASSERT_TRUE(seen.insert(id).second) << "duplicate in query " << q;
        const float d = r->results.distances[q * 10 + i];
        EXPECT_GE(d, previous);
        previous = d;
        EXPECT_NEAR(d, Exact(c.metric, queries->row<float>(q), base->row<float>(id)),
                    1e-3f * (1 + std::abs(d)));
      }
      const QueryStats& s = r->stats[q];
      EXPECT_GT(s.pages_read, 0u);
      EXPECT_LE(s.reranked, p.list_size);
      EXPECT_GE(s.reranked, 10u);
      (group == 0 ? full_reads : speculative_reads) += s.reranked;
    }
  }
  // Stopping once a group leaves the top-k unchanged reads fewer vectors.
  EXPECT_LT(speculative_reads, full_reads);
}

INSTANTIATE_TEST_SUITE_P(Layouts, DecoupledSearch,
                         ::testing::Values(Case{Metric::kL2, false}, Case{Metric::kL2, true},
                                           Case{Metric::kCosine, true},
                                           Case{Metric::kInnerProduct, false},
                                           Case{Metric::kL2, false, true}));

// The packed in-place baseline (edge slots that carry their vectors): exact
// distances come with the pages, so no vector is read, and the results are
// the nearest expanded vertices.
TEST_P(DecoupledSearch, PackedBaselineReadsNoVectors) {
  testutil::ScratchDir dir;
  const Case c = GetParam();
  Built b;
  Build(dir, c.metric, c.shuffle, &b, c.shuffle_edges, /*vectors_in_pages=*/true);
  auto index = GraphIndex::Open(b.index, {.decoupled_dir = b.layout});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto queries = ReadVectorsAsFloat(b.data.queries);
  auto base = ReadVectorsAsFloat(b.data.base);
  ASSERT_TRUE(queries.ok() && base.ok());
  SearchParams p;
  p.k = 10;
  p.list_size = 64;
  p.rerank_group = 8;  // not used: nothing to re-rank
  auto r = SearchBatch(**index, *queries, p, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto recall = ComputeRecall(r->results, b.data.gt, 10);
  ASSERT_TRUE(recall.ok());
  EXPECT_GE(recall->mean_recall, 0.97);
  for (std::uint64_t q = 0; q < queries->rows(); ++q) {
    std::set<VectorId> seen;
    for (std::uint32_t i = 0; i < 10; ++i) {
      const VectorId id = r->results.ids[q * 10 + i];
      ASSERT_LT(id, kRows);
      ASSERT_TRUE(seen.insert(id).second);
      const float d = r->results.distances[q * 10 + i];
      EXPECT_NEAR(d, Exact(c.metric, queries->row<float>(q), base->row<float>(id)),
                  1e-3f * (1 + std::abs(d)));
    }
    const QueryStats& s = r->stats[q];
    EXPECT_EQ(s.reranked, 0u);
    // One exact distance an expanded vertex, none from a vector read.
    EXPECT_EQ(s.full_distances, s.expanded);
    EXPECT_LE(s.pages_read, s.expanded);
  }
}

TEST(DecoupledSearchCache, HotPagesServedFromRamKeepRecall) {
  testutil::ScratchDir dir;
  Built b;
  Build(dir, Metric::kL2, true, &b);
  auto queries = ReadVectorsAsFloat(b.data.queries);
  ASSERT_TRUE(queries.ok());
  for (EdgeCachePolicy policy : {EdgeCachePolicy::kNavis, EdgeCachePolicy::kLru,
                                 EdgeCachePolicy::kClock, EdgeCachePolicy::kLfu}) {
    auto index = GraphIndex::Open(
        b.index, {.cache_mib = 1, .decoupled_dir = b.layout, .edge_cache_policy = policy});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_NE((*index)->Describe().find("edge cache 256 pages"), std::string::npos);
    SearchParams p;
    p.list_size = 64;
    p.rerank_group = 0;
    double hits = 0, reads = 0;
    for (int pass = 0; pass < 2; ++pass) {
      auto r = SearchBatch(**index, *queries, p, 2);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      auto recall = ComputeRecall(r->results, b.data.gt, 10);
      ASSERT_TRUE(recall.ok());
      EXPECT_GE(recall->mean_recall, 0.97);
      if (pass == 1) {
        for (const QueryStats& s : r->stats) {
          hits += s.cache_hits;
          reads += s.pages_read;
        }
      }
    }
    EXPECT_GT(hits, 0.2 * reads) << "a warm cache serves part of the walk";
  }
}

class EvenRows final : public IdFilter {
 public:
  bool Accept(std::uint64_t id) const override { return id % 2 == 0; }
};

TEST(DecoupledSearchErrors, FilterParametersAndDamagedFiles) {
  testutil::ScratchDir dir;
  Built b;
  Build(dir, Metric::kL2, true, &b);
  auto queries = ReadVectorsAsFloat(b.data.queries);
  ASSERT_TRUE(queries.ok());
  {
    auto index = GraphIndex::Open(b.index, {.decoupled_dir = b.layout});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    auto searcher = (*index)->NewSearcher(SearchParams{});
    ASSERT_TRUE(searcher.ok());
    std::vector<VectorId> ids(10);
    std::vector<float> dist(10);
    const EvenRows even;
    SearchParams p;
    p.list_size = 64;
    p.filter = &even;
    QueryStats stats;
    ASSERT_TRUE((*searcher)->Search(queries->row<float>(0), p, ids, dist, &stats).ok());
    for (VectorId id : ids) EXPECT_EQ(id % 2, 0u);

    SearchParams bad;
    bad.rerank_group = SearchParams::kMaxRerankGroup + 1;
    EXPECT_TRUE((*searcher)->Search(queries->row<float>(0), bad, ids, dist, &stats)
                    .IsInvalidArgument());
    bad = SearchParams{};
    bad.list_size = 5;
    EXPECT_TRUE((*searcher)->Search(queries->row<float>(0), bad, ids, dist, &stats)
                    .IsInvalidArgument());
    std::vector<float> short_query(kDim - 1, 0.5f);
    EXPECT_TRUE((*searcher)->Search(short_query, SearchParams{}, ids, dist, &stats)
                    .IsInvalidArgument());
  }
  EXPECT_TRUE(GraphIndex::Open(b.index, {.decoupled_dir = dir.File("none")}).status().IsNotFound());
  EXPECT_TRUE(GraphIndex::Open(b.index, {.cache_nodes = 100, .decoupled_dir = b.layout})
                  .status()
                  .IsInvalidArgument());

  // A damaged vector sector: found by the re-rank that reads it.
  auto flip = [](const std::string& path, std::uint64_t sectors) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    for (std::uint64_t s = 1; s <= sectors; ++s) {
      f.seekp(static_cast<std::streamoff>(s * 4096 + 100));
      f.put('\x5a');
    }
  };
  flip(b.layout + "/graph.vectors", std::filesystem::file_size(b.layout + "/graph.vectors") / 4096 - 1);
  {
    auto index = GraphIndex::Open(b.index, {.decoupled_dir = b.layout});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    auto searcher = (*index)->NewSearcher(SearchParams{});
    ASSERT_TRUE(searcher.ok());
    std::vector<VectorId> ids(10);
    std::vector<float> dist(10);
    QueryStats stats;
    const Status st = (*searcher)->Search(queries->row<float>(1), SearchParams{}, ids, dist, &stats);
    EXPECT_TRUE(st.IsCorruption()) << st.ToString();
    // The searcher stays usable for the next query (no read left in flight).
    EXPECT_TRUE((*searcher)->Search(queries->row<float>(2), SearchParams{}, ids, dist, &stats)
                    .IsCorruption());
  }
  // A damaged edge page: the indirection table is rebuilt from the pages at
  // open, which reports it.
  flip(b.layout + "/graph.edges", 1);
  EXPECT_TRUE(GraphIndex::Open(b.index, {.decoupled_dir = b.layout}).status().IsCorruption());
}

TEST(DecoupledSearchErrors, PackedSlotsOfAnotherShapeAreRefused) {
  // An edge file whose slots carry vectors of another size than the index's
  // (a layout of another index, say) would be read past each vector's end.
  testutil::ScratchDir dir;
  Built b;
  Build(dir, Metric::kL2, false, &b, false, /*vectors_in_pages=*/true);
  ASSERT_TRUE(GraphIndex::Open(b.index, {.decoupled_dir = b.layout}).ok());
  const std::string edges = b.layout + "/graph.edges";
  auto file = format::EdgeFile::Open(edges);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const auto n = static_cast<std::uint32_t>(file->num_vertices());
  const std::uint32_t capacity = file->geometry().capacity;
  EXPECT_EQ(file->geometry().vector_bytes, kDim * 4);
  std::vector<std::uint32_t> placement(n);
  for (std::uint32_t v = 0; v < n; ++v) placement[v] = v;
  auto no_edges = [](std::uint32_t, std::vector<std::uint32_t>*) { return Status::OK(); };
  auto zeros = [](std::uint32_t, std::span<std::byte> out) {
    std::fill(out.begin(), out.end(), std::byte{0});
    return Status::OK();
  };
  ASSERT_TRUE(format::WriteEdgeFile(edges, capacity, n, placement, no_edges, kDim * 2, zeros).ok());
  const Status st = GraphIndex::Open(b.index, {.decoupled_dir = b.layout}).status();
  EXPECT_TRUE(st.IsCorruption()) << st.ToString();
  EXPECT_NE(st.message().find("-byte vectors"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace strata
