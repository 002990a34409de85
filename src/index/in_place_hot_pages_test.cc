// Hot pages rewritten whole (InPlaceGraphOptions::hot_page_heat): with a
// hot-page cache holding every page, inserts rewrite the cached pages their
// changed lists are on instead of moving those lists one by one; the graph
// keeps its recall against exact ground truth, every list stays found,
// compaction still repacks around the pages' free slots, and the journal
// (the rewritten pages' unchanged lists among its moves) replays at a
// reopen.
#include <gtest/gtest.h>

#include <vector>

#include "index/in_place_test_util.h"
#include "scratch_dir.h"
#include "strata/in_place_graph.h"

namespace strata {
namespace {

using testutil::Build;
using testutil::Fixture;
using testutil::Journal;
using testutil::kBuilt;
using testutil::kRows;
using testutil::LiveRecall;

TEST(InPlaceHotPages, CachedPagesAreRewrittenWholeAndReplay) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f);
  OpenOptions open;
  open.cache_mib = 4;  // 1,024 pages: every page of the fixture's layout
  const InPlaceGraphOptions options{.capacity = kRows, .hot_page_heat = 1};
  Journal journal;
  const std::uint64_t half = kBuilt + (kRows - kBuilt) / 2;
  std::uint64_t hot = 0, written = 0, moves = 0, lists = 0, spilled = 0;
  {
    auto g = InPlaceGraph::Open(f.index, f.layout, options, open);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_GE(LiveRecall(**g, f, kBuilt), 0.95);  // the searches fill the cache
    for (std::uint64_t r = kBuilt; r < half; ++r) {
      PreparedInPlaceInsert p;
      ASSERT_TRUE((*g)->Prepare(f.base.row<float>(r), &p).ok());
      hot += p.report.hot_pages_rewritten;
      written += p.report.edge_pages_written;
      moves += p.moves.size();
      lists += p.report.lists_written;
      spilled += p.report.lists_spilled;
      EXPECT_LE(p.report.hot_pages_rewritten, p.report.edge_pages_written);
      (*g)->Commit(&p);
      journal.Record(p);
      if (r % 100 == 0) {
        EXPECT_GE(LiveRecall(**g, f, r + 1), 0.9) << "after row " << r;
      }
    }
    // Most changed lists sit on cached pages: rewritten with their mates,
    // whose moves the journal holds too.
    EXPECT_GT(hot, (half - kBuilt) / 2);
    EXPECT_GT(moves, lists);
    // Lists are packed by length: a page rewritten full leaves no room for
    // a list that grows by a back-edge, which then moves to a fresh page.
    EXPECT_GT(spilled, 0u);
    EXPECT_GE(LiveRecall(**g, f, half), 0.95);
    EXPECT_LE((*g)->live_edge_pages(), (*g)->edge_pages());
    // Compaction over pages with free slots between their lists.
    int compactions = 0;
    while (compactions < 10000) {
      PreparedInPlaceInsert p;
      ASSERT_TRUE((*g)->PrepareCompaction(&p, 0.0, 0.5).ok());
      const bool did = !p.moves.empty();
      (*g)->Commit(&p);
      journal.Record(p);
      if (!did) break;
      ++compactions;
    }
    EXPECT_GE(LiveRecall(**g, f, half), 0.95);
    for (std::uint64_t r = half; r < kRows; ++r) {
      PreparedInPlaceInsert p;
      ASSERT_TRUE((*g)->Prepare(f.base.row<float>(r), &p).ok());
      (*g)->Commit(&p);
      journal.Record(p);
    }
    EXPECT_GE(LiveRecall(**g, f, kRows), 0.95);
  }
  // Every list is found where the journal says (Open fails on a vertex
  // left without one), and the graph answers as before.
  const InPlaceRecovery recovery = journal.Recovery();
  auto g = InPlaceGraph::Open(f.index, f.layout, options, open, &recovery);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->num_rows(), kRows);
  EXPECT_GE(LiveRecall(**g, f, kRows), 0.95);
}

// Without a cache nothing is hot: the option changes nothing.
TEST(InPlaceHotPages, NoCacheNoRewrites) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f);
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows, .hot_page_heat = 1});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  for (std::uint64_t r = kBuilt; r < kBuilt + 200; ++r) {
    PreparedInPlaceInsert p;
    ASSERT_TRUE((*g)->Prepare(f.base.row<float>(r), &p).ok());
    EXPECT_EQ(p.report.hot_pages_rewritten, 0u);
    (*g)->Commit(&p);
  }
  EXPECT_GE(LiveRecall(**g, f, kBuilt + 200), 0.95);
}

}  // namespace
}  // namespace strata
