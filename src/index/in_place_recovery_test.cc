// Reopening an in-place graph from its journal (InPlaceRecovery): every
// committed insert is found again and the graph takes further inserts; an
// insert prepared but never committed (a crash between the page writes and
// the journal write) leaves no trace; a torn last vector sector is rebuilt
// from the owner's copies, and an owner that keeps them has that sector
// written only once full; a journal that does not fit the files, or a
// grown layout opened without one, is Corruption.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "index/in_place_test_util.h"
#include "scratch_dir.h"
#include "strata/eval.h"
#include "strata/in_place_graph.h"

namespace strata {
namespace {

using testutil::Build;
using testutil::Fixture;
using testutil::kBuilt;
using testutil::kDim;
using testutil::kRows;
using testutil::Journal;

double Recall(const InPlaceGraph& g, const Fixture& f, std::uint64_t rows,
              const std::vector<bool>& deleted) {
  return testutil::LiveRecall(g, f, rows, deleted);
}

void InsertRows(InPlaceGraph* g, const Fixture& f, std::uint64_t from, std::uint64_t to,
                Journal* journal) {
  for (std::uint64_t r = from; r < to; ++r) {
    PreparedInPlaceInsert p;
    ASSERT_TRUE(g->Prepare(f.base.row<float>(r), &p).ok());
    ASSERT_EQ(p.row, r);
    g->Commit(&p);
    journal->Record(p);
  }
}

// The bytes the vector file holds at slot `v` (empty past its end).
std::vector<float> FileSlot(const std::string& vectors, std::uint64_t v) {
  const std::uint64_t per_sector = 4088 / (kDim * sizeof(float));
  std::vector<float> out(kDim);
  const int fd = ::open(vectors.c_str(), O_RDONLY);
  if (fd < 0) return {};
  const off_t at = static_cast<off_t>((1 + v / per_sector) * 4096 +
                                      (v % per_sector) * kDim * sizeof(float));
  const ssize_t got = ::pread(fd, out.data(), kDim * sizeof(float), at);
  ::close(fd);
  if (got != static_cast<ssize_t>(kDim * sizeof(float))) return {};
  return out;
}

std::vector<float> Row(const Fixture& f, std::uint64_t r) {
  const auto x = f.base.row<float>(r);
  return {x.begin(), x.end()};
}

void ExpectFoundAtDistanceZero(const InPlaceGraph& g, const Fixture& f, std::uint64_t from,
                               std::uint64_t to) {
  SearchParams p;
  p.k = 1;
  p.list_size = 32;
  auto s = g.index().NewSearcher(p);
  ASSERT_TRUE(s.ok());
  for (std::uint64_t row = from; row < to; ++row) {
    VectorId id = 0;
    float dist = 1;
    ASSERT_TRUE((*s)->Search(f.base.row<float>(row), p, {&id, 1}, {&dist, 1}, nullptr).ok());
    EXPECT_EQ(id, row);
    EXPECT_NEAR(dist, 0.0f, 1e-4);
  }
}

class InPlaceRecoveryLayouts : public ::testing::TestWithParam<bool> {};

TEST_P(InPlaceRecoveryLayouts, ReplayFindsEveryCommittedInsertAndNothingElse) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, true, &f, /*vectors_in_pages=*/GetParam());
  const std::uint64_t half = kBuilt + (kRows - kBuilt) / 2;
  Journal journal;
  std::vector<bool> deleted(kRows, false);
  {
    auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    InsertRows(g->get(), f, kBuilt, half, &journal);
    // Prepared, never committed: its pages and vector are written, nothing
    // names them.
    PreparedInPlaceInsert lost;
    ASSERT_TRUE((*g)->Prepare(f.base.row<float>(half), &lost).ok());
  }
  const InPlaceRecovery recovery = journal.Recovery();
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &recovery);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ((*g)->num_rows(), half);
  // Deletes are the owner's to replay too.
  for (std::uint64_t r = 0; r < half; r += 9) {
    ASSERT_TRUE((*g)->Delete(static_cast<std::uint32_t>(r)).ok());
    deleted[r] = true;
  }
  EXPECT_GE(Recall(**g, f, half, deleted), 0.95);
  // The reopened graph takes the rest, the uncommitted row among them.
  InsertRows(g->get(), f, half, kRows, &journal);
  EXPECT_EQ((*g)->num_rows(), kRows);
  EXPECT_GE(Recall(**g, f, kRows, deleted), 0.95);
  // And survives a second reopen.
  g->reset();
  const InPlaceRecovery again = journal.Recovery();
  auto h = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &again);
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  const std::vector<bool> none(kRows, false);
  EXPECT_GE(Recall(**h, f, kRows, none), 0.95);
}

INSTANTIATE_TEST_SUITE_P(Layouts, InPlaceRecoveryLayouts, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "vectors_in_pages" : "decoupled";
                         });

TEST(InPlaceRecovery, TornLastVectorSectorIsRebuiltFromTheOwnersCopies) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, false, &f);
  Journal journal;
  const std::uint64_t upto = kBuilt + 333;  // the last sector holds some appended vectors
  {
    auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    InsertRows(g->get(), f, kBuilt, upto, &journal);
  }
  // Tear the sector of the last appended vector.
  const std::string vectors = f.layout + "/graph.vectors";
  const std::uint64_t per_sector = 4088 / (kDim * sizeof(float));
  const std::uint64_t sector = 1 + (upto - 1) / per_sector;
  {
    const int fd = ::open(vectors.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    const char junk[64] = "torn write torn write torn write";
    ASSERT_EQ(::pwrite(fd, junk, sizeof(junk), static_cast<off_t>(sector * 4096 + 100)),
              static_cast<ssize_t>(sizeof(junk)));
    ::close(fd);
  }
  InPlaceRecovery r = journal.Recovery();
  EXPECT_EQ(InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &r).status().code(),
            StatusCode::kCorruption);
  std::uint64_t asked = 0;
  r.vector_of = [&](std::uint32_t v, std::span<float> out) {
    ++asked;
    std::memcpy(out.data(), f.base.row<float>(v).data(), kDim * sizeof(float));
    return true;
  };
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &r);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_GT(asked, 0u);
  EXPECT_LE(asked, per_sector);
  ExpectFoundAtDistanceZero(**g, f, upto - asked, upto);  // each rebuilt vector
}

// An owner that keeps every vector (InPlaceRecovery::vector_of) has the
// vector file's last sector written only once full: until then searches take
// it from RAM, and a reopen (after a crash: nothing flushes it) rebuilds it
// from the owner's copies.
TEST(InPlaceRecovery, AnOwnersLastVectorSectorIsWrittenOnlyOnceFull) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, false, &f);
  const std::string vectors = f.layout + "/graph.vectors";
  const std::uint64_t per_sector = 4088 / (kDim * sizeof(float));
  const std::uint64_t upto = kBuilt + 333;
  const std::uint64_t first = (upto - 1) / per_sector * per_sector;  // the last sector's first slot
  ASSERT_GT(first, kBuilt);  // a sector of appended vectors only
  ASSERT_LT(first + per_sector, kRows);
  std::uint64_t asked = 0;
  const auto copies = [&](std::uint32_t v, std::span<float> out) {
    ++asked;
    std::memcpy(out.data(), f.base.row<float>(v).data(), kDim * sizeof(float));
    return true;
  };
  Journal journal;
  InPlaceRecovery fresh = journal.Recovery();
  fresh.vector_of = copies;
  {
    auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &fresh);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    InsertRows(g->get(), f, kBuilt, upto, &journal);
    EXPECT_EQ(FileSlot(vectors, first - 1), Row(f, first - 1));  // a full sector: written
    EXPECT_NE(FileSlot(vectors, upto - 1), Row(f, upto - 1));    // the last: RAM only
    ExpectFoundAtDistanceZero(**g, f, first, upto);
  }  // dropped as a crash would leave it
  asked = 0;
  InPlaceRecovery r = journal.Recovery();
  r.vector_of = copies;
  auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &r);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(asked, upto - first);
  ExpectFoundAtDistanceZero(**g, f, first, upto);
  // Filling the sector writes it, whole.
  InsertRows(g->get(), f, upto, first + per_sector + 1, &journal);
  EXPECT_EQ(FileSlot(vectors, upto - 1), Row(f, upto - 1));
  EXPECT_EQ(FileSlot(vectors, first + per_sector - 1), Row(f, first + per_sector - 1));
  EXPECT_NE(FileSlot(vectors, first + per_sector), Row(f, first + per_sector));
  InsertRows(g->get(), f, first + per_sector + 1, kRows, &journal);
  const std::vector<bool> none(kRows, false);
  EXPECT_GE(Recall(**g, f, kRows, none), 0.95);
  ExpectFoundAtDistanceZero(**g, f, kRows - (kRows % per_sector), kRows);
}

TEST(InPlaceRecovery, AJournalThatDoesNotFitIsCorruption) {
  testutil::ScratchDir dir;
  Fixture f;
  Build(dir, Metric::kL2, false, &f);
  Journal journal;
  {
    auto g = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    InsertRows(g->get(), f, kBuilt, kBuilt + 200, &journal);
  }
  // Grown files without their journal: the written layout is gone.
  EXPECT_EQ(InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}).status().code(),
            StatusCode::kCorruption);
  // An empty journal: the lists still where they were written, when no
  // page has been taken again, and none of the appended rows.
  InPlaceRecovery empty;
  auto bare = InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &empty);
  if (bare.ok()) {
    EXPECT_EQ((*bare)->num_rows(), kBuilt);
  } else {
    EXPECT_EQ(bare.status().code(), StatusCode::kCorruption);
  }
  bare = Status::Aborted("closed");
  InPlaceRecovery past = journal.Recovery();
  past.moves.push_back({3, 1u << 30, 0});
  EXPECT_EQ(InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &past).status().code(),
            StatusCode::kCorruption);
  InPlaceRecovery short_codes = journal.Recovery();
  short_codes.codes.pop_back();
  EXPECT_EQ(
      InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &short_codes).status().code(),
      StatusCode::kCorruption);
  // The right journal still opens it.
  const InPlaceRecovery good = journal.Recovery();
  EXPECT_TRUE(InPlaceGraph::Open(f.index, f.layout, {.capacity = kRows}, {}, &good).ok());
}

}  // namespace
}  // namespace strata
