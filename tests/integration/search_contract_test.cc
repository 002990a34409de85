// The Searcher contract that callers we do not control (Python, HTTP) rely
// on, for both index types: null stats, bounded k and L, a zero query under
// cosine, which distances are exact, and a searcher that outlives its Index.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scratch_dir.h"
#include "synthetic_dataset.h"
#include "strata/dataset.h"
#include "strata/graph_index.h"
#include "strata/index.h"
#include "strata/ivf_index.h"

namespace strata {
namespace {

constexpr std::uint32_t kDim = 32;

struct Built {
  testutil::ScratchDir dir;
  testutil::TestDataset data;
  std::string index_dir;
};

// A small index of `type` ("graph", "ivf" with extended codes, "ivf-raw").
std::unique_ptr<Built> Build(const std::string& type, Metric metric) {
  auto b = std::make_unique<Built>();
  b->data = testutil::MakeTestDataset(b->dir, metric, ElementType::kFloat32, 3000, kDim, 20, 5);
  b->index_dir = b->dir.File("idx");
  if (type == "graph") {
    GraphBuildOptions o;
    o.metric = metric;
    o.R = 24;
    o.L = 48;
    o.threads = 2;
    EXPECT_TRUE(BuildGraphIndex(b->data.base, b->index_dir, o).ok());
  } else {
    IvfBuildOptions o;
    o.metric = metric;
    o.clusters = 16;
    o.threads = 2;
    if (type == "ivf-raw") o.rerank = "raw";
    EXPECT_TRUE(BuildIvfIndex(b->data.base, b->index_dir, o).ok());
  }
  return b;
}

std::vector<float> Query(const Built& b, std::uint64_t row) {
  auto q = ReadVectorsAsFloat(b.data.queries);
  EXPECT_TRUE(q.ok());
  const auto all = q->values<float>();
  return {all.begin() + row * kDim, all.begin() + (row + 1) * kDim};
}

class SearchContract : public ::testing::TestWithParam<std::string> {};

TEST_P(SearchContract, NullStatsBoundsAndZeroCosineQuery) {
  auto b = Build(GetParam(), Metric::kCosine);
  auto index = Index::Open(b->index_dir);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  auto searcher = (*index)->NewSearcher(SearchParams{});
  ASSERT_TRUE(searcher.ok());
  SearchParams p;
  std::vector<VectorId> ids(p.k);
  std::vector<float> dist(p.k);
  const std::vector<float> q = Query(*b, 0);
  ASSERT_TRUE((*searcher)->Search(q, p, ids, dist, nullptr).ok());  // stats optional
  EXPECT_NE(ids[0], kInvalidVectorId);

  SearchParams big = p;
  big.k = SearchParams::kMaxK + 1;
  big.list_size = big.k;
  EXPECT_TRUE((*searcher)->Search(q, big, ids, dist, nullptr).IsInvalidArgument());
  big = p;
  big.list_size = SearchParams::kMaxListSize + 1;
  EXPECT_TRUE((*searcher)->Search(q, big, ids, dist, nullptr).IsInvalidArgument());
  big.list_size = 0xFFFFFFFFu;  // 4 * L would wrap in 32 bits
  EXPECT_TRUE((*searcher)->Search(q, big, ids, dist, nullptr).IsInvalidArgument());

  const std::vector<float> zero(kDim, 0.0f);
  const Status st = (*searcher)->Search(zero, p, ids, dist, nullptr);
  EXPECT_TRUE(st.IsInvalidArgument()) << st.ToString();
  EXPECT_NE(st.message().find("zero"), std::string::npos);
}

TEST_P(SearchContract, DistancesAreExactWhereTheIndexSaysSo) {
  auto b = Build(GetParam(), Metric::kL2);
  auto index = Index::Open(b->index_dir);
  ASSERT_TRUE(index.ok());
  EXPECT_EQ((*index)->distances_exact(), GetParam() != "ivf");
  auto base = ReadVectorsAsFloat(b->data.base);
  ASSERT_TRUE(base.ok());
  auto searcher = (*index)->NewSearcher(SearchParams{});
  ASSERT_TRUE(searcher.ok());
  SearchParams p;
  p.nprobe = 16;
  std::vector<VectorId> ids(p.k);
  std::vector<float> dist(p.k);
  double worst = 0;
  for (std::uint64_t row = 0; row < 10; ++row) {
    const std::vector<float> q = Query(*b, row);
    ASSERT_TRUE((*searcher)->Search(q, p, ids, dist, nullptr).ok());
    for (std::uint32_t i = 0; i < p.k; ++i) {
      ASSERT_NE(ids[i], kInvalidVectorId);
      const float* x = base->values<float>().data() + ids[i] * kDim;
      double exact = 0;
      for (std::uint32_t j = 0; j < kDim; ++j) exact += (q[j] - x[j]) * double(q[j] - x[j]);
      worst = std::max(worst, std::abs(exact - dist[i]) / std::max(exact, 1e-9));
    }
  }
  if ((*index)->distances_exact()) {
    EXPECT_LT(worst, 1e-4);
  } else {
    EXPECT_GT(worst, 1e-4);  // estimates, as documented
  }
}

TEST_P(SearchContract, SearcherOutlivesItsIndex) {
  auto b = Build(GetParam(), Metric::kL2);
  auto index = Index::Open(b->index_dir);
  ASSERT_TRUE(index.ok());
  auto searcher = (*index)->NewSearcher(SearchParams{});
  ASSERT_TRUE(searcher.ok());
  SearchParams p;
  std::vector<VectorId> before(p.k), after(p.k);
  std::vector<float> d1(p.k), d2(p.k);
  const std::vector<float> q = Query(*b, 3);
  ASSERT_TRUE((*searcher)->Search(q, p, before, d1, nullptr).ok());
  index->reset();  // the Index goes; the searcher keeps what it reads
  ASSERT_TRUE((*searcher)->Search(q, p, after, d2, nullptr).ok());
  EXPECT_EQ(before, after);
  EXPECT_EQ(d1, d2);
}

INSTANTIATE_TEST_SUITE_P(Types, SearchContract, ::testing::Values("graph", "ivf", "ivf-raw"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s) {
                             if (c == '-') c = '_';
                           }
                           return s;
                         });

}  // namespace
}  // namespace strata
