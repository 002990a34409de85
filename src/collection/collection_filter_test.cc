// Filtered collection search (CollectionSearchParams::filter) against exact
// filtered brute force: in the flat phase, over an index with pending
// vectors beside it, with deletes, id-only filters and filters nothing
// passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "strata/collection.h"
#include "strata/filter.h"

namespace strata {
namespace {

constexpr std::uint32_t kDim = 16;

CollectionOptions Options(const std::string& index_type) {
  CollectionOptions o;
  o.index_type = index_type;
  o.dim = kDim;
  o.flat_threshold = 300;
  o.merge_pending_count = 1u << 30;  // merges only when asked
  o.graph.R = 16;
  o.graph.L = 32;
  o.graph.pq_bytes = 8;
  o.graph.opq_iterations = 0;
  o.graph.page_shuffle = false;
  o.graph.mem_graph_ratio = 0;
  o.background_merge = false;
  return o;
}

struct Point {
  std::vector<float> vector;
  std::string payload;
};

class FilteredSearch : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto c = Collection::Open(dir_.File("c"), Options(GetParam()));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    c_ = std::move(*c);
  }

  // Upserts ids [from, to): payload {"group": id % 4, "r": 0..99}.
  void Add(VectorId from, VectorId to) {
    std::vector<VectorId> ids(to - from);
    std::iota(ids.begin(), ids.end(), from);
    std::vector<float> flat;
    std::vector<std::string> payloads;
    std::normal_distribution<float> nd;
    for (VectorId id : ids) {
      Point p;
      for (std::uint32_t j = 0; j < kDim; ++j) p.vector.push_back(nd(rng_));
      p.payload = "{\"group\": " + std::to_string(id % 4) + ", \"r\": " + std::to_string(rng_() % 100) + "}";
      flat.insert(flat.end(), p.vector.begin(), p.vector.end());
      payloads.push_back(p.payload);
      live_[id] = std::move(p);
    }
    ASSERT_TRUE(c_->Upsert(ids, flat, payloads).ok());
  }

  // The exact k nearest live points that pass `f`.
  std::vector<VectorId> Truth(const std::vector<float>& q, const PayloadFilter& f, std::size_t k) const {
    std::vector<std::pair<float, VectorId>> all;
    for (const auto& [id, p] : live_) {
      if (!f.Matches(id, p.payload)) continue;
      float d = 0;
      for (std::uint32_t j = 0; j < kDim; ++j) d += (q[j] - p.vector[j]) * (q[j] - p.vector[j]);
      all.emplace_back(d, id);
    }
    std::sort(all.begin(), all.end());
    std::vector<VectorId> out;
    for (std::size_t i = 0; i < std::min(k, all.size()); ++i) out.push_back(all[i].second);
    return out;
  }

  // Recall@10 of filtered searches over `queries` random queries; every
  // result must pass the filter and be live.
  double FilteredRecall(const std::string& filter_json, int queries) {
    auto f = PayloadFilter::Parse(filter_json);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    CollectionSearchParams p;
    p.index.k = 10;
    p.index.list_size = 64;
    p.index.nprobe = 16;
    p.filter = &*f;
    std::normal_distribution<float> nd;
    double hits = 0, total = 0;
    for (int q = 0; q < queries; ++q) {
      std::vector<float> query(kDim);
      for (float& x : query) x = nd(rng_);
      auto got = c_->Search(query, p);
      EXPECT_TRUE(got.ok()) << got.status().ToString();
      if (!got.ok()) return 0;
      const std::vector<VectorId> want = Truth(query, *f, 10);
      const std::set<VectorId> truth(want.begin(), want.end());
      for (const SearchHit& h : *got) {
        auto it = live_.find(h.id);
        EXPECT_NE(it, live_.end()) << "returned id " << h.id << " is not live";
        if (it == live_.end()) continue;
        EXPECT_TRUE(f->Matches(h.id, it->second.payload)) << "id " << h.id << " fails the filter";
        hits += truth.count(h.id);
      }
      total += static_cast<double>(want.size());
    }
    return total == 0 ? 1.0 : hits / total;
  }

  testutil::ScratchDir dir_;
  std::unique_ptr<Collection> c_;
  std::map<VectorId, Point> live_;
  std::mt19937_64 rng_{21};
};

TEST_P(FilteredSearch, FlatPhaseIsExact) {
  Add(0, 250);
  EXPECT_EQ(c_->Stats().index_version, 0u);
  EXPECT_DOUBLE_EQ(FilteredRecall(R"({"must": [{"key": "group", "match": {"value": 1}}]})", 20), 1.0);
  EXPECT_DOUBLE_EQ(FilteredRecall(R"({"must": [{"key": "r", "range": {"lt": 10}}]})", 20), 1.0);
  EXPECT_DOUBLE_EQ(FilteredRecall(R"({"must": [{"has_id": [3, 77, 140]}]})", 10), 1.0);
}

TEST_P(FilteredSearch, IndexAndPendingTogether) {
  Add(0, 1500);  // the threshold build, then pending entries
  ASSERT_TRUE(c_->Merge().ok());
  Add(1500, 2500);  // 1,000 pending beside the index
  const CollectionStats st = c_->Stats();
  ASSERT_GT(st.index_version, 0u);
  ASSERT_EQ(st.pending, 1000u);
  EXPECT_GE(FilteredRecall(R"({"must": [{"key": "group", "match": {"any": [1, 2]}}]})", 30), 0.9);
  EXPECT_GE(FilteredRecall(R"({"must_not": [{"key": "r", "range": {"gte": 70}}]})", 30), 0.9);
  // Deleted points never come back, whatever the filter.
  std::vector<VectorId> gone;
  for (VectorId id = 0; id < 2500; id += 5) gone.push_back(id);
  ASSERT_TRUE(c_->Delete(gone).ok());
  for (VectorId id : gone) live_.erase(id);
  EXPECT_GE(FilteredRecall(R"({"must": [{"key": "group", "match": {"value": 0}}]})", 30), 0.9);
}

TEST_P(FilteredSearch, NothingPassesGivesNoResults) {
  Add(0, 1200);
  auto f = PayloadFilter::Parse(R"({"must": [{"key": "group", "match": {"value": 9}}]})");
  ASSERT_TRUE(f.ok());
  CollectionSearchParams p;
  p.filter = &*f;
  std::vector<float> q(kDim, 0.5f);
  auto got = c_->Search(q, p);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_TRUE(got->empty());
  // The empty filter passes everything.
  PayloadFilter all;
  p.filter = &all;
  got = c_->Search(q, p);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), p.index.k);
}

INSTANTIATE_TEST_SUITE_P(IndexTypes, FilteredSearch, ::testing::Values("graph", "ivf"));

}  // namespace
}  // namespace strata
