// update_mode in_place against exact brute force over a model of the live
// set: writes applied to the SSD graph by the applier (no merge), replaces
// and deletes never returned, reopen from the journal, the rebuild once
// enough is dead, bad options, and searches, upserts and deletes on
// threads at once (run under ThreadSanitizer in CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "scratch_dir.h"
#include "strata/collection.h"

namespace strata {
namespace {

constexpr std::uint32_t kDim = 16;

CollectionOptions InPlaceOptions(Metric metric = Metric::kL2) {
  CollectionOptions o;
  o.dim = kDim;
  o.metric = metric;
  o.index_type = "graph";
  o.update_mode = UpdateMode::kInPlace;
  o.in_place_threads = 2;  // two seeks at once, structural updates in turn
  o.flat_threshold = 300;
  o.graph.R = 16;
  o.graph.L = 32;
  o.graph.pq_bytes = 8;
  o.graph.opq_iterations = 0;
  o.graph.page_shuffle = false;
  o.graph.mem_graph_ratio = 0.05;
  return o;
}

std::vector<float> RandomVector(std::mt19937_64& rng) {
  std::normal_distribution<float> nd;
  std::vector<float> v(kDim);
  for (float& x : v) x = nd(rng);
  return v;
}

float Distance(const std::vector<float>& a, const std::vector<float>& b) {
  float d = 0;
  for (std::uint32_t j = 0; j < kDim; ++j) d += (a[j] - b[j]) * (a[j] - b[j]);
  return d;
}

struct Model {
  std::map<VectorId, std::vector<float>> live;
  std::vector<VectorId> Nearest(const std::vector<float>& q, std::size_t k) const {
    std::vector<std::pair<float, VectorId>> all;
    for (const auto& [id, v] : live) all.emplace_back(Distance(q, v), id);
    std::sort(all.begin(), all.end());
    std::vector<VectorId> ids;
    for (std::size_t i = 0; i < std::min(k, all.size()); ++i) ids.push_back(all[i].second);
    return ids;
  }
};

Status Upsert(Collection& c, Model& m, std::mt19937_64& rng, const std::vector<VectorId>& ids) {
  std::vector<float> flat;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    auto v = RandomVector(rng);
    flat.insert(flat.end(), v.begin(), v.end());
  }
  Status st = c.Upsert(ids, flat);
  if (st.ok()) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      m.live[ids[i]] = std::vector<float>(flat.begin() + i * kDim, flat.begin() + (i + 1) * kDim);
    }
  }
  return st;
}

// Waits until the applier has emptied the pending list.
void WaitApplied(const Collection& c) {
  for (int i = 0; i < 3000 && c.Stats().pending > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(c.Stats().pending, 0u) << "the applier did not catch up";
}

// Opens a collection at `path` with rows 0..n-1 upserted (into `model`)
// and applied; null (with a test failure) if it does not open.
std::unique_ptr<Collection> OpenFilled(const std::string& path, const CollectionOptions& o,
                                       std::mt19937_64& rng, Model& model, VectorId n) {
  auto c = Collection::Open(path, o);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  if (!c.ok()) return nullptr;
  std::vector<VectorId> ids;
  for (VectorId i = 0; i < n; ++i) ids.push_back(i);
  EXPECT_TRUE(Upsert(**c, model, rng, ids).ok());
  WaitApplied(**c);
  return std::move(*c);
}

// Recall@10 against the model; every hit live, at its exact distance, once.
double Recall(const Collection& c, const Model& m, std::mt19937_64& rng, int queries) {
  CollectionSearchParams p;
  p.index.k = 10;
  p.index.list_size = 64;
  double hit = 0, total = 0;
  for (int q = 0; q < queries; ++q) {
    auto query = RandomVector(rng);
    auto got = c.Search(query, p);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (!got.ok()) return 0;
    const auto want = m.Nearest(query, 10);
    const std::set<VectorId> truth(want.begin(), want.end());
    std::set<VectorId> seen;
    for (const SearchHit& h : *got) {
      auto it = m.live.find(h.id);
      EXPECT_TRUE(it != m.live.end()) << "returned id " << h.id << " is not live";
      EXPECT_TRUE(seen.insert(h.id).second) << "id " << h.id << " returned twice";
      if (it != m.live.end()) {
        EXPECT_NEAR(h.distance, Distance(query, it->second), 1e-3);
      }
      hit += truth.count(h.id);
    }
    total += static_cast<double>(want.size());
  }
  return total == 0 ? 1.0 : hit / total;
}

// Both in-place layouts: decoupled, and the packed baseline (edge slots
// that carry their vectors; in_place_packed_baseline), whose searches take
// their distances from the pages, so a vector lost in a move shows.
class CollectionInPlaceLayouts : public ::testing::TestWithParam<bool> {};

TEST_P(CollectionInPlaceLayouts, WritesAreAppliedToTheGraphAndSurviveReopen) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  std::mt19937_64 rng(11);
  Model model;
  VectorId next = 1000;
  {
    CollectionOptions o = InPlaceOptions();
    o.in_place_packed_baseline = GetParam();
    auto c = Collection::Open(path, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    for (int b = 0; b < 20; ++b) {  // 2,000: the first 300 build, the rest go in place
      std::vector<VectorId> ids;
      for (int i = 0; i < 100; ++i) ids.push_back(next++);
      ASSERT_TRUE(Upsert(**c, model, rng, ids).ok());
    }
    // Replaces (old rows stay as dead routing vertices) and deletes, some of
    // them of rows written in place.
    std::vector<VectorId> again, gone;
    for (VectorId id = 1000; id < next; id += 7) again.push_back(id);
    ASSERT_TRUE(Upsert(**c, model, rng, again).ok());
    for (VectorId id = 1003; id < next; id += 11) gone.push_back(id);
    auto n = (*c)->Delete(gone);
    ASSERT_TRUE(n.ok());
    for (VectorId id : gone) model.live.erase(id);
    WaitApplied(**c);
    const CollectionStats s = (*c)->Stats();
    EXPECT_EQ(s.update_mode, UpdateMode::kInPlace);
    EXPECT_EQ(s.index_version, 1u);  // no merge: the graph took every write
    EXPECT_EQ(s.merges, 1u);         // (the threshold build)
    // Every write after the build but those replaced or deleted before
    // the applier reached them.
    EXPECT_GE(s.in_place_inserts, 1200u);
    EXPECT_LE(s.in_place_inserts, 1700u + again.size());
    EXPECT_EQ(s.live, model.live.size());
    EXPECT_EQ((*c)->Count(), model.live.size());
    // The applier works its repair backlog off between writes.
    for (int i = 0; i < 2000; ++i) {
      const CollectionStats now = (*c)->Stats();
      if (now.in_place_repairs > 0 && now.in_place_repairs_queued == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_GT((*c)->Stats().in_place_repairs, 0u);  // deleted and replaced rows re-linked
    EXPECT_EQ((*c)->Stats().in_place_repairs_queued, 0u);
    // At least an edge page an insert, and the vector file's sectors as
    // they fill (one a sector's worth of inserts: the store keeps the
    // vectors of a sector not written yet); repairs write too.
    EXPECT_GE((*c)->Stats().in_place_insert_bytes_written, 4096 * s.in_place_inserts);
    EXPECT_GT((*c)->Stats().in_place_upkeep_bytes_written, 0u);
    EXPECT_GE(Recall(**c, model, rng, 60), 0.9);
    ASSERT_TRUE((*c)->Close().ok());
  }
  // Reopen: the journal puts every applied write back.
  auto c = Collection::Open(path, CollectionOptions{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->Stats().pending, 0u);
  EXPECT_EQ((*c)->Count(), model.live.size());
  EXPECT_GE(Recall(**c, model, rng, 60), 0.9);
  std::vector<VectorId> all;
  for (const auto& [id, v] : model.live) all.push_back(id);
  auto got = (*c)->Get(all);
  ASSERT_TRUE(got.ok());
  for (std::size_t i = 0; i < all.size(); ++i) {
    ASSERT_TRUE((*got)[i].found);
    EXPECT_EQ((*got)[i].vector, model.live[all[i]]);
  }
  // And takes more.
  std::vector<VectorId> more;
  for (int i = 0; i < 300; ++i) more.push_back(next++);
  ASSERT_TRUE(Upsert(**c, model, rng, more).ok());
  WaitApplied(**c);
  EXPECT_GE(Recall(**c, model, rng, 60), 0.9);
}

INSTANTIATE_TEST_SUITE_P(Layouts, CollectionInPlaceLayouts, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "packed_baseline" : "decoupled";
                         });

TEST(CollectionInPlace, CosineRowsAreFoundAtTheirDistance) {
  testutil::ScratchDir dir;
  auto c = Collection::Open(dir.File("c"), InPlaceOptions(Metric::kCosine));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::mt19937_64 rng(5);
  std::vector<std::vector<float>> rows;
  std::vector<float> flat;
  std::vector<VectorId> ids;
  for (VectorId i = 0; i < 800; ++i) {
    rows.push_back(RandomVector(rng));
    flat.insert(flat.end(), rows.back().begin(), rows.back().end());
    ids.push_back(i);
  }
  ASSERT_TRUE((*c)->Upsert(std::span(ids).first(300), std::span(flat).first(300 * kDim)).ok());
  ASSERT_TRUE((*c)->Upsert(std::span(ids).subspan(300), std::span(flat).subspan(300 * kDim)).ok());
  WaitApplied(**c);
  CollectionSearchParams p;
  p.index.k = 1;
  p.index.list_size = 48;
  int found = 0;
  for (VectorId i = 300; i < 800; i += 5) {
    auto got = (*c)->Search(rows[i], p);
    ASSERT_TRUE(got.ok());
    ASSERT_EQ(got->size(), 1u);
    found += (*got)[0].id == i;
    EXPECT_NEAR((*got)[0].distance, 0.0f, 1e-4);
  }
  EXPECT_GE(found, 95);
}

TEST(CollectionInPlace, EnoughDeadRowsRebuildTheIndex) {
  testutil::ScratchDir dir;
  CollectionOptions o = InPlaceOptions();
  o.merge_pending_count = 100;
  o.in_place_rebuild_dead_ratio = 0.2;
  std::mt19937_64 rng(3);
  Model model;
  auto c = OpenFilled(dir.File("c"), o, rng, model, 1000);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->Stats().merges, 1u);
  std::vector<VectorId> gone;
  for (VectorId i = 0; i < 1000; i += 3) gone.push_back(i);  // a third dead
  ASSERT_TRUE(c->Delete(gone).ok());
  for (VectorId id : gone) model.live.erase(id);
  ASSERT_TRUE(c->WaitForMerge().ok());
  for (int i = 0; i < 500 && c->Stats().index_version < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const CollectionStats s = c->Stats();
  EXPECT_EQ(s.index_version, 2u);
  EXPECT_EQ(s.deleted, 0u);
  EXPECT_EQ(s.indexed, model.live.size());
  EXPECT_GE(Recall(*c, model, rng, 40), 0.9);
  // The rebuilt version takes writes in place again.
  std::vector<VectorId> more;
  for (VectorId i = 2000; i < 2300; ++i) more.push_back(i);
  ASSERT_TRUE(Upsert(*c, model, rng, more).ok());
  WaitApplied(*c);
  EXPECT_EQ(c->Stats().index_version, 2u);
  EXPECT_GE(Recall(*c, model, rng, 40), 0.9);
}

// A drain deletes nearly every row in place; until the rebuild (or the
// return to the flat phase) the graph is 99 % tombstones, among which no
// walk finds the few live rows: they are ranked exactly instead. (A
// crash-test round verified 34 live rows among 4,931 here at recall 0.36.)
TEST(CollectionInPlace, AGraphNearlyAllDeadIsSearchedExactly) {
  testutil::ScratchDir dir;
  CollectionOptions o = InPlaceOptions();
  o.in_place_rebuild_dead_ratio = 1.0;  // no rebuild before the check
  std::mt19937_64 rng(17);
  Model model;
  auto c = OpenFilled(dir.File("c"), o, rng, model, 3000);
  ASSERT_TRUE(c);
  const std::uint64_t version = c->Stats().index_version;
  ASSERT_GE(version, 1u);
  std::vector<VectorId> gone;
  for (VectorId i = 0; i < 3000; ++i) {
    if (i % 100 != 7) gone.push_back(i);
  }
  ASSERT_TRUE(c->Delete(gone).ok());
  for (VectorId id : gone) model.live.erase(id);
  ASSERT_EQ(model.live.size(), 30u);
  EXPECT_DOUBLE_EQ(Recall(*c, model, rng, 50), 1.0);
  CollectionStats s = c->Stats();
  EXPECT_EQ(s.index_version, version);  // searched before any rebuild
  EXPECT_EQ(s.deleted, gone.size());
  // A row inserted meanwhile is found beside them.
  std::vector<VectorId> more{5000, 5001};
  ASSERT_TRUE(Upsert(*c, model, rng, more).ok());
  WaitApplied(*c);
  EXPECT_DOUBLE_EQ(Recall(*c, model, rng, 50), 1.0);
  EXPECT_EQ(c->Stats().index_version, version);
}

// Compaction packs the edge pages fully only once writes have paused for
// in_place_compaction_pause_ms; a collection whose pause never comes keeps
// the sparser pages the writes left (bounded at twice the fewest), and
// catches up after a reopen with a short pause. Packed means within the idle
// compaction's slack (5 % over the fewest pages, plus one) of the fewest;
// where in that band a compaction stops depends on which lists it met, so
// the reopened collection is held to the band above the first variant's
// count, not to that count.
TEST(CollectionInPlace, CompactionWaitsForWritesToPause) {
  testutil::ScratchDir dir;
  std::uint64_t pages[2] = {0, 0};
  std::mt19937_64 rng(23);
  for (int variant = 0; variant < 2; ++variant) {
    CollectionOptions o = InPlaceOptions();
    o.in_place_compaction_pause_ms = variant == 0 ? 0 : 3'600'000;
    auto c = Collection::Open(dir.File("c" + std::to_string(variant)), o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    Model model;
    std::mt19937_64 data(5);  // the same rows in both
    std::vector<VectorId> ids;
    for (VectorId i = 0; i < 600; ++i) ids.push_back(i);
    ASSERT_TRUE(Upsert(**c, model, data, ids).ok());
    for (VectorId b = 600; b < 2600; b += 100) {
      std::vector<VectorId> batch;
      for (VectorId i = b; i < b + 100; ++i) batch.push_back(i);
      ASSERT_TRUE(Upsert(**c, model, data, batch).ok());
    }
    WaitApplied(**c);
    // Settled: no compaction for 0.5 s.
    std::uint64_t last = (*c)->Stats().in_place_compactions;
    for (int quiet = 0; quiet < 5;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      const std::uint64_t now = (*c)->Stats().in_place_compactions;
      quiet = now == last ? quiet + 1 : 0;
      last = now;
    }
    pages[variant] = (*c)->Stats().in_place_live_edge_pages;
    EXPECT_GE(Recall(**c, model, rng, 30), 0.9);
    if (variant == 1) {
      ASSERT_TRUE((*c)->Close().ok());
      CollectionOptions again;
      again.in_place_compaction_pause_ms = 0;
      auto reopened = Collection::Open(dir.File("c1"), again);
      ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
      // Generous: under ThreadSanitizer on a 2-core runner the catch-up
      // compactions take several seconds.
      const auto packed = static_cast<std::uint64_t>(static_cast<double>(pages[0]) * 1.05) + 2;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      while ((*reopened)->Stats().in_place_live_edge_pages > packed &&
             std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      EXPECT_LE((*reopened)->Stats().in_place_live_edge_pages, packed);
      EXPECT_GE(Recall(**reopened, model, rng, 30), 0.9);
    }
  }
  EXPECT_GT(pages[1], pages[0] + pages[0] / 5) << "packed " << pages[0] << ", not packed " << pages[1];
  CollectionOptions bad = InPlaceOptions();
  bad.in_place_compaction_pause_ms = 3'600'001;
  EXPECT_FALSE(Collection::Open(dir.File("bad"), bad).ok());
}

TEST(CollectionInPlace, OptionsItCannotServeAreRefused) {
  testutil::ScratchDir dir;
  CollectionOptions o = InPlaceOptions();
  o.index_type = "ivf";
  EXPECT_EQ(Collection::Open(dir.File("a"), o).status().code(), StatusCode::kInvalidArgument);
  o = InPlaceOptions();
  o.element_type = ElementType::kUint8;
  EXPECT_EQ(Collection::Open(dir.File("b"), o).status().code(), StatusCode::kInvalidArgument);
  o = InPlaceOptions();
  o.in_place_rebuild_dead_ratio = 0;
  EXPECT_EQ(Collection::Open(dir.File("c"), o).status().code(), StatusCode::kInvalidArgument);
  o = InPlaceOptions();
  o.in_place_L = 4;
  EXPECT_EQ(Collection::Open(dir.File("c"), o).status().code(), StatusCode::kInvalidArgument);
  o = InPlaceOptions();
  o.in_place_threads = 0;
  EXPECT_EQ(Collection::Open(dir.File("c"), o).status().code(), StatusCode::kInvalidArgument);
  o = InPlaceOptions();
  o.in_place_back_edges = 4097;
  EXPECT_EQ(Collection::Open(dir.File("c"), o).status().code(), StatusCode::kInvalidArgument);
  // The mode is stored: reopening with the other one is an error.
  ASSERT_TRUE(Collection::Open(dir.File("d"), InPlaceOptions()).ok());
  CollectionOptions buffered;
  buffered.update_mode = UpdateMode::kBuffered;
  EXPECT_EQ(Collection::Open(dir.File("d"), buffered).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(Collection::Open(dir.File("d"), CollectionOptions{}).ok());
}

// Searches on two threads beside an upserting and a deleting thread: no
// search returns an id deleted before it began or the same id twice, and
// every hit is at its exact distance; recall of the live set at the end.
// STRATA_IN_PLACE_OPS scales the run (operations of all kinds).
TEST(CollectionInPlace, SearchesBesideUpsertsAndDeletes) {
  const char* env = std::getenv("STRATA_IN_PLACE_OPS");
  const std::uint64_t ops = env != nullptr ? std::strtoull(env, nullptr, 10) : 20000;
  testutil::ScratchDir dir;
  CollectionOptions o = InPlaceOptions();
  // An edge-page cache, every cached page hot: inserts rewrite cached pages
  // whole (Peek, Offer) while searches look pages up and admit them.
  o.open.cache_mib = 1;
  o.in_place_hot_page_heat = 1;
  auto c = Collection::Open(dir.File("c"), o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::mt19937_64 rng(9);
  constexpr VectorId kIds = 4000;
  std::vector<std::vector<float>> vectors(kIds);
  for (auto& v : vectors) v = RandomVector(rng);
  {
    std::vector<float> flat;
    std::vector<VectorId> ids;
    for (VectorId i = 0; i < 400; ++i) {
      ids.push_back(i);
      flat.insert(flat.end(), vectors[i].begin(), vectors[i].end());
    }
    ASSERT_TRUE((*c)->Upsert(ids, flat).ok());
  }
  std::unique_ptr<std::atomic<int>[]> state(new std::atomic<int>[kIds]);  // 0 never, 1 live, 2 deleted
  for (VectorId i = 0; i < kIds; ++i) state[i].store(i < 400 ? 1 : 0);
  std::atomic<std::uint64_t> done{0}, searches{0}, failures{0};
  std::atomic<bool> stop{false};
  std::mutex write_mu;  // the two writers agree on the model
  auto searcher = [&](unsigned seed) {
    std::mt19937_64 r(seed);
    CollectionSearchParams p;
    p.index.k = 10;
    p.index.list_size = 40;
    while (!stop.load()) {
      std::vector<bool> gone_before(kIds);
      for (VectorId i = 0; i < kIds; ++i) gone_before[i] = state[i].load() == 2;
      const auto query = RandomVector(r);
      auto got = (*c)->Search(query, p);
      if (!got.ok()) {
        ++failures;
        continue;
      }
      std::set<VectorId> seen;
      for (const SearchHit& h : *got) {
        if (h.id >= kIds || gone_before[h.id] || !seen.insert(h.id).second ||
            std::abs(h.distance - Distance(query, vectors[h.id])) > 1e-3) {
          ++failures;
        }
      }
      ++searches;
      ++done;
    }
  };
  auto upserter = [&] {
    for (VectorId id = 400; id < kIds && !stop.load(); ++id) {
      std::lock_guard<std::mutex> lock(write_mu);
      if (!(*c)->Upsert(id, vectors[id]).ok()) ++failures;
      state[id].store(1);
      ++done;
    }
  };
  auto deleter = [&] {
    std::mt19937_64 r(4);
    while (!stop.load()) {
      const VectorId id = r() % kIds;
      std::lock_guard<std::mutex> lock(write_mu);
      if (state[id].load() != 1 || id % 5 != 0) continue;
      auto n = (*c)->Delete(std::span<const VectorId>(&id, 1));
      if (!n.ok() || *n != 1) ++failures;
      state[id].store(2);
      ++done;
    }
  };
  std::thread s1(searcher, 1), s2(searcher, 2), w(upserter), d(deleter);
  while (done.load() < ops && searches.load() < ops) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop.store(true);
  s1.join();
  s2.join();
  w.join();
  d.join();
  EXPECT_EQ(failures.load(), 0u);
  WaitApplied(**c);
  Model model;
  for (VectorId i = 0; i < kIds; ++i) {
    if (state[i].load() == 1) model.live[i] = vectors[i];
  }
  EXPECT_EQ((*c)->Count(), model.live.size());
  EXPECT_GE(Recall(**c, model, rng, 60), 0.95);
  EXPECT_GT((*c)->Stats().in_place_hot_pages_rewritten, 0u);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Deletes below the rebuild's threshold leave many dead vertices in the
// graph; they route the walk but the live ones are still found.
TEST(CollectionInPlace, ManyDeadRowsStayRoutable) {
  testutil::ScratchDir dir;
  CollectionOptions o;
  o.dim = kDim;
  o.update_mode = UpdateMode::kInPlace;
  o.flat_threshold = 256;
  o.merge_pending_count = 300;
  o.graph.R = 32;
  o.graph.L = 64;
  o.graph.opq_iterations = 0;
  auto c = Collection::Open(dir.File("c"), o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::mt19937_64 rng(21);
  Model model;
  std::vector<VectorId> ids;
  for (VectorId i = 0; i < 660; ++i) ids.push_back(i);
  ASSERT_TRUE(Upsert(**c, model, rng, std::vector<VectorId>(ids.begin(), ids.begin() + 256)).ok());
  ASSERT_TRUE(Upsert(**c, model, rng, std::vector<VectorId>(ids.begin() + 256, ids.end())).ok());
  WaitApplied(**c);
  std::vector<VectorId> gone;
  for (VectorId i = 0; i < 660; i += 2) gone.push_back(i);
  for (VectorId i = 1; i < 660 && gone.size() < 295; i += 6) gone.push_back(i);
  ASSERT_TRUE((*c)->Delete(gone).ok());
  for (VectorId id : gone) model.live.erase(id);
  EXPECT_EQ((*c)->Stats().index_version, 1u);
  EXPECT_GE(Recall(**c, model, rng, 60), 0.9);
  // A rebuild of what is left, then more in place.
  ASSERT_TRUE((*c)->Merge().ok());
  EXPECT_EQ((*c)->Stats().index_version, 2u);
  EXPECT_GE(Recall(**c, model, rng, 60), 0.9);
  std::vector<VectorId> more;
  for (VectorId i = 1000; i < 1400; ++i) more.push_back(i);
  ASSERT_TRUE(Upsert(**c, model, rng, more).ok());
  WaitApplied(**c);
  EXPECT_GE(Recall(**c, model, rng, 60), 0.9);
  ASSERT_TRUE((*c)->Close().ok());
  auto again = Collection::Open(dir.File("c"), CollectionOptions{});
  ASSERT_TRUE(again.ok());
  EXPECT_GE(Recall(**again, model, rng, 60), 0.9);
}

}  // namespace
}  // namespace strata
