// In-place inserts and deletes on the decoupled layout (InPlaceGraph):
// recall against exact ground truth of the live set after the base has
// doubled, tombstones never returned, freed edge pages reused, the write
// volume of an insert bounded by the pages it changes, bad input, and
// searches running beside the writer (run under ThreadSanitizer in CI).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "index/in_place_test_util.h"
#include "scratch_dir.h"
#include "strata/eval.h"
#include "strata/in_place_graph.h"
#include "synthetic_dataset.h"

namespace strata {
namespace {

using testutil::Build;
using testutil::Fixture;
using testutil::kBuilt;
using testutil::kDim;
using testutil::kQueries;
using testutil::kRows;
using testutil::LiveGroundTruth;

struct Case {
  Metric metric;
  bool shuffle;
  bool vectors_in_pages = false;  // the packed baseline
};

class InPlaceInsert : public ::testing::TestWithParam<Case> {};

TEST_P(InPlaceInsert, DoublingTheBaseKeepsRecallAgainstTheLiveSet) {
  testutil::ScratchDir dir;
  const Case c = GetParam();
  Fixture f;
  Build(dir, c.metric, c.shuffle, &f, c.vectors_in_pages);
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = static_cast<std::uint32_t>(kRows + 64)});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const std::uint64_t pages_at_open = (*g)->edge_pages();
  std::uint64_t bytes = 0, reused = 0, written = 0, max_pages = 0;
  for (std::uint64_t r = kBuilt; r < kRows; ++r) {
    InsertReport report;
    auto row = (*g)->Insert(f.base.row<float>(r), &report);
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    ASSERT_EQ(*row, r);  // rows follow the index's
    EXPECT_GE(report.lists_written, 2u);
    EXPECT_GT(report.pages_read, 0u);
    bytes += report.bytes_written;
    reused += report.pages_reused;
    written += report.edge_pages_written;
    max_pages = std::max<std::uint64_t>(max_pages, report.edge_pages_written);
  }
  EXPECT_EQ((*g)->num_rows(), kRows);
  // Lists are gathered, never one page per changed list: R 24 takes 25 and
  // the few swept along, at most 3 pages of 29 and one vector sector an
  // insert (the packed baseline's slots hold 17 lists a page at d 24: 4).
  const std::uint32_t most_pages = c.vectors_in_pages ? 4 : 3;
  EXPECT_LE(max_pages, most_pages);
  EXPECT_LE(bytes / (kRows - kBuilt), (most_pages + 1) * 4096u);
  // Pages whose every list moved are taken again: the file grows by less
  // than it is written.
  EXPECT_GT(reused, 0u);
  EXPECT_LT((*g)->edge_pages() - pages_at_open, written);

  const std::vector<bool> none(kRows, false);
  const GroundTruth gt = LiveGroundTruth(f, c.metric, kRows, none);
  SearchParams p;
  p.k = 10;
  p.list_size = 64;
  auto r = SearchBatch((*g)->index(), f.queries, p, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto recall = ComputeRecall(r->results, gt, 10);
  ASSERT_TRUE(recall.ok());
  EXPECT_GE(recall->mean_recall, 0.95);
  // Inserted rows are found, not only the built ones.
  std::uint64_t inserted_hits = 0;
  for (VectorId id : r->results.ids) inserted_hits += id >= kBuilt && id < kRows;
  EXPECT_GT(inserted_hits, r->results.ids.size() / 4);
  if (c.vectors_in_pages) {
    // The packed baseline's distances come from the vectors on the edge
    // pages: every list an insert moved took its own vector along.
    for (std::uint64_t q = 0; q < f.queries.rows(); ++q) {
      for (std::uint32_t i = 0; i < 10; ++i) {
        const VectorId id = r->results.ids[q * 10 + i];
        ASSERT_LT(id, kRows);
        double want = 0;
        const float* x = f.base.row<float>(id).data();
        const float* y = f.queries.row<float>(q).data();
        if (c.metric == Metric::kL2) {
          for (std::uint32_t j = 0; j < kDim; ++j) want += (x[j] - y[j]) * (x[j] - y[j]);
        } else {
          double xy = 0, xx = 0, yy = 0;
          for (std::uint32_t j = 0; j < kDim; ++j) {
            xy += x[j] * y[j];
            xx += x[j] * x[j];
            yy += y[j] * y[j];
          }
          want = 1 - xy / std::sqrt(xx * yy);
        }
        EXPECT_NEAR(r->results.distances[q * 10 + i], want, 1e-3 * (1 + std::abs(want))) << id;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, InPlaceInsert,
                         ::testing::Values(Case{Metric::kL2, false}, Case{Metric::kL2, true},
                                           Case{Metric::kCosine, true},
                                           Case{Metric::kL2, true, true},
                                           Case{Metric::kCosine, true, true}),
                         [](const auto& info) {
                           return std::string(MetricName(info.param.metric)) +
                                  (info.param.shuffle ? "_shuffled" : "_packed") +
                                  (info.param.vectors_in_pages ? "_vectors_in_pages" : "");
                         });

// back_edges: an insert links back from its nearest out-neighbours only,
// so it changes at most back_edges + 1 lists (its own and theirs); every
// out-neighbour otherwise. The graph stays navigable either way.
TEST(InPlaceBackEdges, GoToTheNearestOutNeighboursOnly) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f);
  constexpr std::uint32_t kBackEdges = 5;
  for (const std::uint32_t back_edges : {0u, kBackEdges}) {
    SCOPED_TRACE(back_edges);
    const std::string layout = dir.path() + "/layout_" + std::to_string(back_edges);
    std::filesystem::copy(f.layout, layout);
    auto g = InPlaceGraph::Open(f.index, layout,
                                {.capacity = static_cast<std::uint32_t>(kRows + 64),
                                 .back_edges = back_edges,
                                 .sweep_leftovers = false});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    std::uint32_t most_changed = 0;
    for (std::uint64_t r = kBuilt; r < kRows; ++r) {
      InsertReport report;
      auto row = (*g)->Insert(f.base.row<float>(r), &report);
      ASSERT_TRUE(row.ok()) << row.status().ToString();
      ASSERT_EQ(report.lists_swept, 0u);
      most_changed = std::max(most_changed, report.lists_written);
    }
    if (back_edges == 0) {
      EXPECT_GT(most_changed, kBackEdges + 1);  // the limit below is not vacuous
    } else {
      EXPECT_LE(most_changed, kBackEdges + 1);
    }
    EXPECT_GE(testutil::LiveRecall(**g, f, kRows), 0.9);
  }
}

TEST(InPlaceDelete, TombstonesAreNeverReturnedAndRecallHolds) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f);
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<bool> deleted(kRows, false);
  for (std::uint64_t r = kBuilt; r < kRows; ++r) {
    auto row = (*g)->Insert(f.base.row<float>(r));
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    if (r % 3 == 0) {  // delete as we go: old rows and fresh ones
      ASSERT_TRUE((*g)->Delete(static_cast<std::uint32_t>(r - kBuilt)).ok());
      deleted[r - kBuilt] = true;
      ASSERT_TRUE((*g)->Delete(static_cast<std::uint32_t>(r)).ok());
      deleted[r] = true;
    }
  }
  EXPECT_EQ((*g)->Delete(5000).code(), StatusCode::kNotFound);
  const auto first_deleted = static_cast<std::uint32_t>(
      std::find(deleted.begin(), deleted.end(), true) - deleted.begin());
  EXPECT_EQ((*g)->Delete(first_deleted).code(), StatusCode::kNotFound);
  SearchParams p;
  p.k = 10;
  p.list_size = 80;
  auto r = SearchBatch((*g)->index(), f.queries, p, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (VectorId id : r->results.ids) {
    ASSERT_LT(id, kRows);
    EXPECT_FALSE(deleted[id]) << "deleted row " << id << " returned";
  }
  auto recall = ComputeRecall(r->results, LiveGroundTruth(f, Metric::kL2, kRows, deleted), 10);
  ASSERT_TRUE(recall.ok());
  EXPECT_GE(recall->mean_recall, 0.93);
}

TEST(InPlaceErrors, BadInputIsRefusedAndChangesNothing) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, false, &f);
  EXPECT_EQ(InPlaceGraph::Open(f.index, f.layout, {}, {.cache_nodes = 100}).status().code(),
            StatusCode::kInvalidArgument);  // the node cache serves the node file
  EXPECT_EQ(InPlaceGraph::Open(f.index, f.layout, {.L = 0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(InPlaceGraph::Open(f.index, f.layout, {.R = 1000}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(InPlaceGraph::Open(f.index, dir.File("nowhere"), {}).status().code(),
            StatusCode::kNotFound);
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kBuilt + 2});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<float> wrong(kDim + 1, 0.5f);
  EXPECT_EQ((*g)->Insert(wrong).status().code(), StatusCode::kInvalidArgument);
  std::vector<float> nan(kDim, std::nanf(""));
  EXPECT_EQ((*g)->Insert(nan).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*g)->num_rows(), kBuilt);
  ASSERT_TRUE((*g)->Insert(f.base.row<float>(kBuilt)).ok());
  ASSERT_TRUE((*g)->Insert(f.base.row<float>(kBuilt + 1)).ok());
  EXPECT_EQ((*g)->Insert(f.base.row<float>(kBuilt + 2)).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ((*g)->num_rows(), kBuilt + 2);
}

// One writer inserting and deleting, two threads searching all the while:
// every result a row that existed, none twice, none deleted before the
// search began; recall of the live set at the end.
TEST(InPlaceConcurrency, SearchesBesideInsertsAndDeletes) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f);
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::unique_ptr<std::atomic<bool>[]> gone(new std::atomic<bool>[kRows]);
  for (std::uint64_t r = 0; r < kRows; ++r) gone[r].store(false);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> searches{0}, failures{0};
  auto searcher = [&](unsigned seed) {
    SearchParams p;
    p.k = 10;
    p.list_size = 40;
    auto s = (*g)->index().NewSearcher(p);
    if (!s.ok()) {
      ++failures;
      return;
    }
    std::vector<VectorId> ids(10);
    std::vector<float> dist(10);
    std::vector<bool> gone_before(kRows);
    for (std::uint64_t i = seed; !stop.load(); ++i) {
      for (std::uint64_t r = 0; r < kRows; r += 1) gone_before[r] = gone[r].load();
      const Status st = (*s)->Search(f.queries.row<float>(i % kQueries), p, ids, dist, nullptr);
      if (!st.ok()) {
        ++failures;
        continue;
      }
      std::set<VectorId> seen;
      for (VectorId id : ids) {
        if (id == kInvalidVectorId) continue;
        if (id >= kRows || gone_before[id] || !seen.insert(id).second) ++failures;
      }
      ++searches;
    }
  };
  std::thread a(searcher, 0), b(searcher, 7);
  std::uint64_t deletes = 0;
  for (std::uint64_t r = kBuilt; r < kRows; ++r) {
    auto row = (*g)->Insert(f.base.row<float>(r));
    if (!row.ok()) {
      ADD_FAILURE() << row.status().ToString();
      break;
    }
    if (r % 4 == 0) {
      const auto victim = static_cast<std::uint32_t>((r * 7919) % (r + 1));
      if (!gone[victim].load() && (*g)->Delete(victim).ok()) {
        gone[victim].store(true);
        ++deletes;
      }
    }
  }
  stop.store(true);
  a.join();
  b.join();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_GT(searches.load(), 100u);
  EXPECT_GT(deletes, 100u);
  std::vector<bool> deleted(kRows);
  for (std::uint64_t r = 0; r < kRows; ++r) deleted[r] = gone[r].load();
  SearchParams p;
  p.k = 10;
  p.list_size = 64;
  auto r = SearchBatch((*g)->index(), f.queries, p, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto recall = ComputeRecall(r->results, LiveGroundTruth(f, Metric::kL2, kRows, deleted), 10);
  ASSERT_TRUE(recall.ok());
  EXPECT_GE(recall->mean_recall, 0.95);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Inserts on two threads at once (seeks in parallel, structural updates in
// turn) beside a search thread, with a hot edge-page cache smaller than the
// graph (pages reused under it): every insert gets its own row, no search
// fails (a list read through a stale, clobbered or stale-cached place is
// Corruption), and recall of the whole set holds at the end.
TEST(InPlaceConcurrency, TwoInsertThreadsKeepEveryListInPlace) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f);
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {.cache_mib = 1});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::atomic<std::uint64_t> next{kBuilt}, failures{0};
  std::vector<std::atomic<std::uint32_t>> base_of(kRows);
  for (std::uint64_t r = 0; r < kRows; ++r) base_of[r].store(static_cast<std::uint32_t>(r));
  std::atomic<bool> stop{false};
  auto inserter = [&] {
    for (std::uint64_t r = next++; r < kRows; r = next++) {
      auto row = (*g)->Insert(f.base.row<float>(r));
      if (!row.ok() || *row >= kRows) {
        ++failures;
        continue;
      }
      base_of[*row].store(static_cast<std::uint32_t>(r));
    }
  };
  std::thread searcher([&] {
    SearchParams p;
    p.k = 10;
    p.list_size = 100;
    auto s = (*g)->index().NewSearcher(p);
    std::vector<VectorId> ids(10);
    std::vector<float> dist(10);
    for (std::uint64_t i = 0; !stop.load(); ++i) {
      if (!s.ok() || !(*s)->Search(f.queries.row<float>(i % kQueries), p, ids, dist, nullptr).ok()) {
        ++failures;
      }
    }
  });
  std::thread a(inserter), b(inserter);
  a.join();
  b.join();
  stop.store(true);
  searcher.join();
  EXPECT_EQ(failures.load(), 0u);
  EXPECT_EQ((*g)->num_rows(), kRows);
  SearchParams p;
  p.k = 10;
  p.list_size = 200;  // wide: walks most lists, each checked against its page
  auto r = SearchBatch((*g)->index(), f.queries, p, 2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  for (VectorId& id : r->results.ids) {
    if (id != kInvalidVectorId) id = base_of[id].load();
  }
  const std::vector<bool> none(kRows, false);
  auto recall = ComputeRecall(r->results, LiveGroundTruth(f, Metric::kL2, kRows, none), 10);
  ASSERT_TRUE(recall.ok());
  EXPECT_GE(recall->mean_recall, 0.95);
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Deletes repaired as they come (IP-DiskANN: in-neighbours re-linked to
// the deleted vertex's out-neighbours) keep a graph that has lost most of
// its rows navigable: new rows are found again and the live set's recall
// holds.
TEST(InPlaceDelete, RepairsKeepAMostlyDeletedGraphNavigable) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f);
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<bool> deleted(kRows, false);
  std::uint64_t relinked = 0;
  for (std::uint32_t r = 0; r < kBuilt; ++r) {
    if (r % 5 == 0) continue;  // 80 % deleted, each repaired
    ASSERT_TRUE((*g)->Delete(r).ok());
    deleted[r] = true;
    PreparedInPlaceInsert repair;
    ASSERT_TRUE((*g)->PrepareRepair(r, &repair).ok());
    EXPECT_EQ(repair.vertex, InPlaceGraph::kNoVertex);
    relinked += repair.moves.size();
    (*g)->Commit(&repair);
  }
  EXPECT_GT(relinked, kBuilt);  // most deleted vertices had in-neighbours to fix
  PreparedInPlaceInsert none;
  EXPECT_EQ((*g)->PrepareRepair(0, &none).code(), StatusCode::kNotFound);  // live row
  SearchParams p;
  p.k = 1;
  p.list_size = 64;
  auto s = (*g)->index().NewSearcher(p);
  ASSERT_TRUE(s.ok());
  int found = 0;
  const std::uint64_t end = kBuilt + 300;
  for (std::uint64_t r = kBuilt; r < end; ++r) {
    auto row = (*g)->Insert(f.base.row<float>(r));
    ASSERT_TRUE(row.ok()) << row.status().ToString();
    VectorId id = 0;
    float dist = 0;
    ASSERT_TRUE((*s)->Search(f.base.row<float>(r), p, {&id, 1}, {&dist, 1}, nullptr).ok());
    found += id == *row;
  }
  EXPECT_GE(found, 295);
  SearchParams q;
  q.k = 10;
  q.list_size = 64;
  auto res = SearchBatch((*g)->index(), f.queries, q, 2);
  ASSERT_TRUE(res.ok());
  auto recall = ComputeRecall(res->results, LiveGroundTruth(f, Metric::kL2, end, deleted), 10);
  ASSERT_TRUE(recall.ok());
  EXPECT_GE(recall->mean_recall, 0.9);
}

}  // namespace
}  // namespace strata
