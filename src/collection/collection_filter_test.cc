// Filtered collection search (CollectionSearchParams::filter) against exact
// filtered brute force: in the flat phase, over an index with pending
// vectors beside it, with deletes, id-only filters and filters nothing
// passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sanitizers.h"
#include "scratch_dir.h"
#include "strata/collection.h"
#include "strata/filter.h"

namespace strata {
namespace {

constexpr std::uint32_t kDim = 16;

// Sanitizer builds run the long randomized test at a tenth of its length
// (the release pass runs it whole).
constexpr int kSanitizerDivisor = testutil::kUnderSanitizer ? 10 : 1;

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
  // `stats` (when given) sums the queries' counters.
  double FilteredRecall(const std::string& filter_json, int queries, QueryStats* stats = nullptr,
                        std::uint64_t exact_scan_limit = CollectionSearchParams{}.exact_scan_limit) {
    auto f = PayloadFilter::Parse(filter_json);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    CollectionSearchParams p;
    p.index.k = 10;
    p.index.list_size = 64;
    p.index.nprobe = 16;
    p.filter = &*f;
    p.exact_scan_limit = exact_scan_limit;
    std::normal_distribution<float> nd;
    double hits = 0, total = 0;
    for (int q = 0; q < queries; ++q) {
      std::vector<float> query(kDim);
      for (float& x : query) x = nd(rng_);
      QueryStats qs;
      auto got = c_->Search(query, p, &qs);
      EXPECT_TRUE(got.ok()) << got.status().ToString();
      if (!got.ok()) return 0;
      if (stats != nullptr) {
        stats->filter_candidates += qs.filter_candidates;
        stats->payload_reads += qs.payload_reads;
        stats->pages_read += qs.pages_read;
      }
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

  // The fixed query set of Results.
  static std::vector<std::vector<float>> FixedQueries() {
    std::mt19937_64 rng(5);
    std::normal_distribution<float> nd;
    std::vector<std::vector<float>> out(15, std::vector<float>(kDim));
    for (auto& q : out) {
      for (float& x : q) x = nd(rng);
    }
    return out;
  }

  // Recall@10 of `results` (one row per FixedQueries query) under `filter_json`.
  double RecallOf(const std::vector<std::vector<VectorId>>& results, const std::string& filter_json) {
    auto f = PayloadFilter::Parse(filter_json);
    EXPECT_TRUE(f.ok());
    const auto queries = FixedQueries();
    double hits = 0, total = 0;
    for (std::size_t q = 0; q < queries.size(); ++q) {
      const std::vector<VectorId> want = Truth(queries[q], *f, 10);
      const std::set<VectorId> truth(want.begin(), want.end());
      for (VectorId id : results[q]) hits += truth.count(id);
      total += static_cast<double>(want.size());
    }
    return total == 0 ? 1.0 : hits / total;
  }

  // The ids each query of a fixed set returns under `filter_json`.
  std::vector<std::vector<VectorId>> Results(const std::string& filter_json,
                                             std::uint64_t exact_scan_limit, QueryStats* stats) {
    auto f = PayloadFilter::Parse(filter_json);
    EXPECT_TRUE(f.ok()) << f.status().ToString();
    CollectionSearchParams p;
    p.index.k = 10;
    p.index.list_size = 48;
    p.index.nprobe = 8;
    p.filter = &*f;
    p.exact_scan_limit = exact_scan_limit;
    std::vector<std::vector<VectorId>> out;
    for (const std::vector<float>& query : FixedQueries()) {
      QueryStats qs;
      auto got = c_->Search(query, p, &qs);
      EXPECT_TRUE(got.ok()) << got.status().ToString();
      stats->payload_reads += qs.payload_reads;
      stats->filter_candidates += qs.filter_candidates;
      out.emplace_back();
      if (got.ok()) {
        for (const SearchHit& h : *got) out.back().push_back(h.id);
      }
    }
    return out;
  }

  void Reopen(const CollectionOptions& o) {
    ASSERT_TRUE(c_->Close().ok());
    c_.reset();
    auto c = Collection::Open(dir_.File("c"), o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    c_ = std::move(*c);
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

const char* kSomeFilters[] = {
    R"({"must": [{"key": "group", "match": {"any": [1, 2]}}]})",
    R"({"must": [{"key": "r", "range": {"gte": 20, "lt": 45}}], "must_not": [{"key": "group", "match": {"value": 3}}]})",
    R"({"should": [{"key": "r", "match": {"value": 4}}, {"key": "group", "match": {"value": 0}}]})",
    R"({"must": [{"key": "r", "match": {"except": [1, 2, 3]}}]})",
};

TEST_P(FilteredSearch, DeclaredFieldsGiveTheSameResultsAsUndeclared) {
  Add(0, 1500);
  ASSERT_TRUE(c_->Merge().ok());
  Add(1500, 2000);
  std::vector<std::vector<std::vector<VectorId>>> before;
  QueryStats undeclared;
  for (const char* f : kSomeFilters) before.push_back(Results(f, 0, &undeclared));
  EXPECT_GT(undeclared.payload_reads, 0u);  // decided on the stored payloads
  ASSERT_TRUE(c_->CreatePayloadIndex({"group", PayloadFieldType::kInteger}).ok());
  ASSERT_TRUE(c_->CreatePayloadIndex({"r", PayloadFieldType::kFloat}).ok());
  EXPECT_EQ(c_->Stats().payload_fields.size(), 2u);
  EXPECT_GT(c_->Stats().payload_index_bytes, 2000u * 16);
  // The same results, but for the walk's own approximations: a declared
  // field also widens the walk by the filter's estimated share and starts it
  // among sampled passing points, so a walk may end elsewhere, never worse.
  QueryStats declared;
  for (std::size_t i = 0; i < std::size(kSomeFilters); ++i) {
    const auto after = Results(kSomeFilters[i], 0, &declared);
    std::size_t same = 0;
    for (std::size_t q = 0; q < after.size(); ++q) same += after[q] == before[i][q];
    EXPECT_GE(same, after.size() - 2) << kSomeFilters[i];
    const double recall_before = RecallOf(before[i], kSomeFilters[i]);
    EXPECT_GE(RecallOf(after, kSomeFilters[i]), std::min(0.95, recall_before - 0.01))
        << kSomeFilters[i];
  }
  EXPECT_EQ(declared.payload_reads, 0u);  // decided in RAM
  EXPECT_EQ(declared.filter_candidates, 0u);  // exact_scan_limit 0: always the walk
}

TEST_P(FilteredSearch, SelectiveFiltersAreExactThroughTheScan) {
  CollectionOptions o = Options(GetParam());
  o.payload_index = {{"r", PayloadFieldType::kInteger}, {"group", PayloadFieldType::kInteger}};
  Reopen(o);
  Add(0, 1500);
  ASSERT_TRUE(c_->Merge().ok());
  Add(1500, 3000);
  // About 1 % and 0.5 % of the points pass: the scan's candidates.
  QueryStats qs;
  EXPECT_DOUBLE_EQ(FilteredRecall(R"({"must": [{"key": "r", "match": {"value": 7}}]})", 20, &qs), 1.0);
  EXPECT_GT(qs.filter_candidates, 20u * 10);
  // Both rank the candidates by their RAM codes and read only the best from
  // SSD (the graph the best L = 64 of those in the index - about half here:
  // the rest are pending; IVF the pages whose bound can still enter the top
  // 2k), never one page per candidate.
  EXPECT_GT(qs.pages_read, 0u);
  EXPECT_LE(qs.pages_read, 20u * 64);
  EXPECT_LT(qs.pages_read, qs.filter_candidates / 2);
  EXPECT_EQ(qs.payload_reads, 0u);
  EXPECT_DOUBLE_EQ(FilteredRecall(R"({"must": [{"key": "group", "match": {"value": 1}},
                                              {"key": "r", "match": {"any": [3, 50]}}]})", 20), 1.0);
  // A filter on an undeclared field beside a declared one: the declared
  // one bounds the candidates, the stored payloads decide the rest.
  QueryStats mixed;
  EXPECT_DOUBLE_EQ(FilteredRecall(R"({"must": [{"key": "r", "match": {"value": 9}},
                                              {"is_empty": {"key": "other"}}]})", 5, &mixed), 1.0);
  EXPECT_GT(mixed.filter_candidates, 0u);
  EXPECT_GT(mixed.payload_reads, 0u);
  // Half the points pass, fewer than the limit: the graph ranks them by
  // code, the IVF walk rejects the rest at a bit test.
  QueryStats half;
  EXPECT_GE(FilteredRecall(R"({"must": [{"key": "group", "match": {"any": [1, 2]}}]})", 20, &half), 0.9);
  EXPECT_EQ(half.filter_candidates, 20u * 1500);
  EXPECT_GT(half.pages_read, 0u);
  // Neither value within the limit (750 and about 300 pass), both together
  // about 75: a sample of the rarer value's points shows that few pass, so
  // they are listed and checked whole, and the scan finds them all.
  QueryStats both;
  EXPECT_DOUBLE_EQ(FilteredRecall(R"({"must": [{"key": "group", "match": {"value": 1}},
      {"key": "r", "match": {"any": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]}}]})", 20, &both, 200), 1.0);
  EXPECT_GT(both.filter_candidates, 20u * 40);
  EXPECT_LT(both.filter_candidates, 20u * 200);
  // Past the limit (750 pass): the walk, not the scan.
  QueryStats broad;
  EXPECT_GE(FilteredRecall(R"({"must": [{"key": "group", "match": {"value": 2}}]})", 20, &broad, 500), 0.9);
  EXPECT_EQ(broad.filter_candidates, 0u);
}

TEST_P(FilteredSearch, PayloadIndexFollowsWritesMergesAndReopen) {
  CollectionOptions o = Options(GetParam());
  o.payload_index = {{"r", PayloadFieldType::kInteger}};
  Reopen(o);
  Add(0, 1500);
  ASSERT_TRUE(c_->Merge().ok());
  Add(0, 400);  // new payloads for old ids
  std::vector<VectorId> gone;
  for (VectorId id = 0; id < 1500; id += 7) gone.push_back(id);
  ASSERT_TRUE(c_->Delete(gone).ok());
  for (VectorId id : gone) live_.erase(id);
  const std::string selective = R"({"must": [{"key": "r", "match": {"any": [11, 12]}}]})";
  QueryStats qs;
  EXPECT_DOUBLE_EQ(FilteredRecall(selective, 20, &qs), 1.0);
  EXPECT_GT(qs.filter_candidates, 0u);
  ASSERT_TRUE(c_->Merge().ok());
  EXPECT_DOUBLE_EQ(FilteredRecall(selective, 20), 1.0);
  // Reopened without naming the field: it stays indexed.
  Reopen(Options(GetParam()));
  ASSERT_EQ(c_->Stats().payload_fields.size(), 1u);
  EXPECT_EQ(c_->Stats().payload_fields[0].path, "r");
  QueryStats after;
  EXPECT_DOUBLE_EQ(FilteredRecall(selective, 20, &after), 1.0);
  EXPECT_GT(after.filter_candidates, 0u);
  // Another type for an indexed field, or a bad path: a clear error.
  CollectionOptions clash = Options(GetParam());
  clash.payload_index = {{"r", PayloadFieldType::kKeyword}};
  ASSERT_TRUE(c_->Close().ok());
  auto bad = Collection::Open(dir_.File("c"), clash);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("indexed as integer"), std::string::npos) << bad.status().ToString();
  Reopen(Options(GetParam()));
  EXPECT_FALSE(c_->CreatePayloadIndex({"r", PayloadFieldType::kFloat}).ok());
  EXPECT_FALSE(c_->CreatePayloadIndex({"a..b", PayloadFieldType::kKeyword}).ok());
  EXPECT_TRUE(c_->CreatePayloadIndex({"r", PayloadFieldType::kInteger}).ok());  // already there
}

// A random filter over the test payloads: one to three conditions of every
// kind the payload index decides (match value/any/except, range, has_id),
// combined by must, should or must_not, with pass fractions from none to all.
std::string RandomFilter(std::mt19937_64& rng) {
  auto condition = [&rng]() -> std::string {
    switch (rng() % 5) {
      case 0: return R"({"key": "group", "match": {"value": )" + std::to_string(rng() % 5) + "}}";
      case 1:
        return R"({"key": "r", "match": {"any": [)" + std::to_string(rng() % 100) + ", " +
               std::to_string(rng() % 100) + "]}}";
      case 2: return R"({"key": "r", "match": {"except": [)" + std::to_string(rng() % 100) + "]}}";
      case 3: {
        const std::uint64_t lo = rng() % 100;
        return R"({"key": "r", "range": {"gte": )" + std::to_string(lo) + R"(, "lt": )" +
               std::to_string(lo + 1 + rng() % 30) + "}}";
      }
      default: {
        std::string ids;
        for (int i = 0; i < 20; ++i) ids += (i ? ", " : "") + std::to_string(rng() % 3000);
        return R"({"has_id": [)" + ids + "]}";
      }
    }
  };
  static const char* kClauses[] = {"must", "should", "must_not"};
  std::string out = "{";
  const int clauses = 1 + static_cast<int>(rng() % 2);
  for (int c = 0; c < clauses; ++c) {
    out += std::string(c ? ", " : "") + "\"" + kClauses[(c + rng()) % 3] + "\": [";
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int i = 0; i < n; ++i) out += (i ? ", " : "") + condition();
    out += "]";
  }
  return out + "}";
}

// Over 5,000 queries with random filters per index type, on an index with pending points,
// overwrites and deletes beside it, declared fields and not, scan limits
// from off to everything: no result ever fails its filter, is deleted or
// comes twice.
TEST_P(FilteredSearch, NoResultEverFailsItsFilter) {
  Add(0, 1500);
  ASSERT_TRUE(c_->Merge().ok());
  Add(1000, 2500);  // overwrites and pending points
  std::vector<VectorId> gone;
  for (VectorId id = 3; id < 2500; id += 9) gone.push_back(id);
  ASSERT_TRUE(c_->Delete(gone).ok());
  for (VectorId id : gone) live_.erase(id);
  std::mt19937_64 rng(99);
  std::normal_distribution<float> nd;
  std::uint64_t checked = 0, queries = 0;
  for (bool declared : {false, true}) {
    if (declared) {
      ASSERT_TRUE(c_->CreatePayloadIndex({"group", PayloadFieldType::kInteger}).ok());
      ASSERT_TRUE(c_->CreatePayloadIndex({"r", PayloadFieldType::kInteger}).ok());
    }
    for (int q = 0; q < 2500 / kSanitizerDivisor; ++q) {
      auto f = PayloadFilter::Parse(RandomFilter(rng));
      ASSERT_TRUE(f.ok()) << f.status().ToString();
      CollectionSearchParams p;
      p.index.k = 10;
      p.index.list_size = 16 + static_cast<std::uint32_t>(rng() % 48);
      p.index.nprobe = 1 + static_cast<std::uint32_t>(rng() % 8);
      p.exact_scan_limit = std::array<std::uint64_t, 3>{0, 100, 4096}[rng() % 3];
      p.filter = &*f;
      std::vector<float> query(kDim);
      for (float& x : query) x = nd(rng);
      auto got = c_->Search(query, p);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      ++queries;
      std::set<VectorId> seen;
      for (const SearchHit& h : *got) {
        auto it = live_.find(h.id);
        ASSERT_NE(it, live_.end()) << "returned id " << h.id << " is not live";
        ASSERT_TRUE(f->Matches(h.id, it->second.payload)) << "id " << h.id << " fails " << q;
        ASSERT_TRUE(seen.insert(h.id).second) << "id " << h.id << " returned twice";
        ++checked;
      }
    }
  }
  EXPECT_EQ(queries, 5000u / kSanitizerDivisor);  // 10^4 with both index types
  EXPECT_GT(checked, 5000u / kSanitizerDivisor);   // most filters pass something
}

INSTANTIATE_TEST_SUITE_P(IndexTypes, FilteredSearch, ::testing::Values("graph", "ivf"));

}  // namespace
}  // namespace strata
