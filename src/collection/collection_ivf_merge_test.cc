// An IVF collection's merges take the incremental path (index/ivf_index_merge.h):
// after inserts, replaces and deletes a Merge() counts as a streaming merge,
// searches at full nprobe agree with brute force over the live set, deleted
// ids never come back, and all of it holds again after a reopen.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <vector>

#include "scratch_dir.h"
#include "strata/collection.h"

namespace strata {
namespace {

constexpr std::uint32_t kDim = 16;

CollectionOptions IvfOptions() {
  CollectionOptions o;
  o.dim = kDim;
  o.metric = Metric::kL2;
  o.index_type = "ivf";
  o.flat_threshold = 1000;
  o.background_merge = false;
  o.ivf.threads = 2;
  return o;
}

// Vectors around 12 centres, so that IVF clusters mean something.
struct Source {
  std::mt19937_64 rng{41};
  std::vector<std::vector<float>> centres;
  Source() {
    std::normal_distribution<float> g(0.0f, 4.0f);
    centres.resize(12, std::vector<float>(kDim));
    for (auto& c : centres) {
      for (float& x : c) x = g(rng);
    }
  }
  std::vector<float> Next() {
    std::normal_distribution<float> g(0.0f, 1.0f);
    const auto& c = centres[rng() % centres.size()];
    std::vector<float> v(kDim);
    for (std::uint32_t j = 0; j < kDim; ++j) v[j] = c[j] + g(rng);
    return v;
  }
};

using Live = std::map<VectorId, std::vector<float>>;

Status Upsert(Collection& c, Live& live, Source& src, const std::vector<VectorId>& ids) {
  std::vector<float> flat;
  std::vector<std::vector<float>> rows;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    rows.push_back(src.Next());
    flat.insert(flat.end(), rows.back().begin(), rows.back().end());
  }
  STRATA_RETURN_IF_ERROR(c.Upsert(ids, flat));
  for (std::size_t i = 0; i < ids.size(); ++i) live[ids[i]] = rows[i];
  return Status::OK();
}

std::vector<VectorId> BruteForce(const Live& live, const std::vector<float>& q, std::size_t k) {
  std::vector<std::pair<float, VectorId>> all;
  for (const auto& [id, v] : live) {
    float d = 0;
    for (std::uint32_t j = 0; j < kDim; ++j) d += (q[j] - v[j]) * (q[j] - v[j]);
    all.emplace_back(d, id);
  }
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end());
  std::vector<VectorId> ids;
  for (std::size_t i = 0; i < k; ++i) ids.push_back(all[i].second);
  return ids;
}

// Recall@10 at every cluster probed (at least 0.98: re-ranking is exact),
// no result outside the live set, every deleted vector's search free of its
// id, and each live id sampled finds itself first.
void CheckAgainstBruteForce(const Collection& c, const Live& live,
                            const std::map<VectorId, std::vector<float>>& gone, Source& src) {
  CollectionSearchParams p;
  p.index.k = 10;
  p.index.nprobe = 100000;  // clamped to the cluster count: every cluster
  double hits = 0, total = 0;
  for (int q = 0; q < 100; ++q) {
    const std::vector<float> query = src.Next();
    auto got = c.Search(query, p);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    const std::vector<VectorId> want = BruteForce(live, query, 10);
    const std::set<VectorId> truth(want.begin(), want.end());
    for (const SearchHit& h : *got) {
      ASSERT_TRUE(live.count(h.id)) << "id " << h.id << " is not live";
      hits += truth.count(h.id);
    }
    total += 10;
  }
  EXPECT_GE(hits / total, 0.98);
  for (const auto& [id, v] : gone) {
    auto got = c.Search(v, p);
    ASSERT_TRUE(got.ok());
    for (const SearchHit& h : *got) ASSERT_NE(h.id, id) << "deleted id came back";
  }
  p.index.k = 1;
  int checked = 0;
  for (const auto& [id, v] : live) {
    if (checked++ % 7 != 0) continue;
    auto got = c.Search(v, p);
    ASSERT_TRUE(got.ok());
    ASSERT_FALSE(got->empty());
    EXPECT_EQ((*got)[0].id, id);
  }
}

TEST(CollectionIvfMerge, MergeIsIncrementalAndMatchesBruteForce) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  Source src;
  Live live;
  std::map<VectorId, std::vector<float>> gone;  // deleted ids -> their last vector
  {
    auto c = Collection::Open(path, IvfOptions());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    std::vector<VectorId> ids;
    for (VectorId i = 0; i < 5000; ++i) ids.push_back(i);
    ASSERT_TRUE(Upsert(**c, live, src, ids).ok());  // crosses the threshold: first build
    const CollectionStats first = (*c)->Stats();
    EXPECT_EQ(first.index_type, "ivf");
    EXPECT_GE(first.index_version, 1u);
    const std::uint64_t streaming_before = first.streaming_merges;

    // 600 new ids, 200 replaced (their old rows die), 300 deleted.
    ids.clear();
    for (VectorId i = 5000; i < 5600; ++i) ids.push_back(i);
    for (VectorId i = 0; i < 1000; i += 5) ids.push_back(i);
    ASSERT_TRUE(Upsert(**c, live, src, ids).ok());
    std::vector<VectorId> dead;
    for (VectorId i = 1001; i < 4000; i += 10) dead.push_back(i);
    auto n = (*c)->Delete(dead);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(*n, dead.size());
    for (VectorId id : dead) {
      gone[id] = live.at(id);
      live.erase(id);
    }
    ASSERT_TRUE((*c)->Merge().ok());
    const CollectionStats after = (*c)->Stats();
    EXPECT_EQ(after.streaming_merges, streaming_before + 1);
    EXPECT_GT(after.index_version, first.index_version);
    EXPECT_EQ((*c)->Count(), live.size());
    CheckAgainstBruteForce(**c, live, gone, src);

    // A second incremental merge on top of the first.
    ids.clear();
    for (VectorId i = 5600; i < 5900; ++i) ids.push_back(i);
    ASSERT_TRUE(Upsert(**c, live, src, ids).ok());
    dead.assign({5000, 5001, 5002, 2, 3});
    ASSERT_TRUE((*c)->Delete(dead).ok());
    for (VectorId id : dead) {
      gone[id] = live.at(id);
      live.erase(id);
    }
    ASSERT_TRUE((*c)->Merge().ok());
    EXPECT_EQ((*c)->Stats().streaming_merges, streaming_before + 2);
    CheckAgainstBruteForce(**c, live, gone, src);
    ASSERT_TRUE((*c)->Close().ok());
  }
  auto c = Collection::Open(path, CollectionOptions{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->Count(), live.size());
  CheckAgainstBruteForce(**c, live, gone, src);
}

}  // namespace
}  // namespace strata
