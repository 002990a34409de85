// The in-place journal: page entries replayed newest first, a reused page's
// entry replacing its old one, legacy per-vertex entries read as older than
// every page entry, appended vertices, other versions' entries reported
// stale and dropped, and malformed entries refused.
#include "collection/in_place_journal.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collection/scratch_db_test_util.h"
#include "collection/store_keys.h"
#include "scratch_dir.h"

namespace strata::collection {
namespace {

using Place = std::tuple<std::uint32_t, std::uint16_t>;  // page, slot
using Places = std::map<std::uint32_t, Place>;           // by vertex

// `version`'s journal, which must load.
LoadedJournal Load(rocksdb::DB* db, std::uint64_t version) {
  auto j = LoadJournal(db, version);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? std::move(*j) : LoadedJournal{};
}

// The replayed moves by vertex; fails the test if a vertex comes twice.
Places ByVertex(const LoadedJournal& j) {
  Places out;
  for (const InPlaceListMove& m : j.recovery.moves) {
    EXPECT_TRUE(out.emplace(m.vertex, Place{m.page, m.slot}).second) << "vertex " << m.vertex;
  }
  return out;
}

void Write(rocksdb::DB* db, rocksdb::WriteBatch* batch) {
  ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), batch).ok());
}

void WriteMoves(rocksdb::DB* db, std::uint64_t version, std::uint64_t seq,
                const std::vector<InPlaceListMove>& moves) {
  rocksdb::WriteBatch batch;
  JournalMoves(version, seq, moves, &batch);
  Write(db, &batch);
}

// A raw key as the journal lays it out: prefix, version and vertex or page
// big-endian.
std::string RawKey(char prefix, std::uint64_t version, std::uint32_t at) {
  std::string key(1, prefix);
  for (int i = 7; i >= 0; --i) key.push_back(static_cast<char>(version >> (8 * i)));
  for (int i = 3; i >= 0; --i) key.push_back(static_cast<char>(at >> (8 * i)));
  return key;
}

TEST(InPlaceJournal, NewestPlaceOfEachVertexWins) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  WriteMoves(db.get(), 3, 1, {{1, 10, 0}, {2, 10, 1}, {3, 11, 0}});
  WriteMoves(db.get(), 3, 2, {{2, 12, 0}, {4, 12, 1}});  // 2 moves on
  const LoadedJournal j = Load(db.get(), 3);
  EXPECT_EQ(ByVertex(j), (Places{{1, {10, 0}}, {2, {12, 0}}, {3, {11, 0}}, {4, {12, 1}}}));
  EXPECT_EQ(j.max_seq, 2u);
  EXPECT_TRUE(j.stale_versions.empty());
}

TEST(InPlaceJournal, OneEntryPerPageWritten) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  // 22 lists on 3 pages: 3 keys.
  std::vector<InPlaceListMove> moves;
  for (std::uint32_t v = 0; v < 22; ++v) {
    moves.push_back({100 + v, 40 + v % 3, static_cast<std::uint16_t>(v / 3)});
  }
  rocksdb::WriteBatch batch;
  JournalMoves(7, 1, moves, &batch);
  EXPECT_EQ(batch.Count(), 3u);
  Write(db.get(), &batch);
  auto j = LoadJournal(db.get(), 7);
  ASSERT_TRUE(j.ok());
  const auto places = ByVertex(*j);
  ASSERT_EQ(places.size(), 22u);
  for (const InPlaceListMove& m : moves) EXPECT_EQ(places.at(m.vertex), (Place{m.page, m.slot}));
}

TEST(InPlaceJournal, ReusedPageReplacesItsEntry) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  WriteMoves(db.get(), 1, 1, {{1, 5, 0}, {2, 5, 1}});
  WriteMoves(db.get(), 1, 2, {{1, 6, 0}, {2, 6, 1}});  // page 5 empties
  WriteMoves(db.get(), 1, 3, {{7, 5, 0}});             // and is reused
  const LoadedJournal j = Load(db.get(), 1);
  EXPECT_EQ(ByVertex(j), (Places{{1, {6, 0}}, {2, {6, 1}}, {7, {5, 0}}}));
  EXPECT_EQ(j.max_seq, 3u);
}

TEST(InPlaceJournal, StaleMentionOnAnOlderPageLoses) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  // Vertex 1 leaves page 8 (whose entry stays), then returns to a page with
  // a lower number: the sequence decides, not the key order.
  WriteMoves(db.get(), 1, 1, {{1, 8, 0}, {2, 8, 1}});
  WriteMoves(db.get(), 1, 2, {{1, 3, 4}});
  EXPECT_EQ(ByVertex(Load(db.get(), 1)), (Places{{1, {3, 4}}, {2, {8, 1}}}));
}

TEST(InPlaceJournal, LegacyVertexEntriesAreOlderThanPageEntries) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  auto legacy = [](std::uint32_t page, std::uint16_t slot) {
    std::string v;
    for (int i = 0; i < 4; ++i) v.push_back(static_cast<char>(page >> (8 * i)));
    for (int i = 0; i < 2; ++i) v.push_back(static_cast<char>(slot >> (8 * i)));
    return v;
  };
  ASSERT_TRUE(db->Put({}, RawKey(kJournalMovePrefix, 2, 1), legacy(3, 2)).ok());
  ASSERT_TRUE(db->Put({}, RawKey(kJournalMovePrefix, 2, 9), legacy(4, 1)).ok());
  WriteMoves(db.get(), 2, 1, {{1, 7, 0}});
  const LoadedJournal j = Load(db.get(), 2);
  EXPECT_EQ(ByVertex(j), (Places{{1, {7, 0}}, {9, {4, 1}}}));
  EXPECT_EQ(j.max_seq, 1u);
}

TEST(InPlaceJournal, InsertAppendsItsVertex) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  for (std::uint32_t v = 50; v < 53; ++v) {
    PreparedInPlaceInsert insert;
    insert.vertex = v;
    insert.moves = {{v, 20 + v, 0}, {1, 20 + v, 1}};
    insert.code = {static_cast<std::uint8_t>(v), 7};
    rocksdb::WriteBatch batch;
    JournalInsert(4, v, insert, 1000 + v, 90 + v, &batch);
    Write(db.get(), &batch);
  }
  const LoadedJournal j = Load(db.get(), 4);
  EXPECT_EQ(j.first_appended, 50u);
  EXPECT_EQ(j.recovery.appended, 3u);
  ASSERT_EQ(j.appended.size(), 3u);
  EXPECT_EQ(j.appended[2], (std::pair<VectorId, std::uint64_t>{1052, 142}));
  EXPECT_EQ(j.recovery.codes, (std::vector<std::uint8_t>{50, 7, 51, 7, 52, 7}));
  // Vertex 1 where the last insert put it.
  EXPECT_EQ(ByVertex(j), (Places{{1, {72, 1}}, {50, {70, 0}}, {51, {71, 0}}, {52, {72, 0}}}));
}

TEST(InPlaceJournal, OtherVersionsAreStaleAndDropRemovesAll) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  WriteMoves(db.get(), 1, 1, {{1, 5, 0}});
  WriteMoves(db.get(), 2, 2, {{1, 6, 0}});
  const LoadedJournal j = Load(db.get(), 2);
  ASSERT_FALSE(j.stale_versions.empty());
  EXPECT_EQ(j.stale_versions[0], 1u);
  EXPECT_EQ(ByVertex(j), (Places{{1, {6, 0}}}));
  rocksdb::WriteBatch drop;
  DropJournal(1, &drop);
  Write(db.get(), &drop);
  EXPECT_TRUE(Load(db.get(), 2).stale_versions.empty());
  EXPECT_TRUE(Load(db.get(), 1).recovery.moves.empty());
}

TEST(InPlaceJournal, MalformedEntriesAreCorruption) {
  testutil::ScratchDir dir;
  auto db = OpenScratchDb(dir.File("db"));
  ASSERT_TRUE(db->Put({}, RawKey(kJournalPagePrefix, 1, 4), std::string(11, '\0')).ok());
  auto j = LoadJournal(db.get(), 1);
  ASSERT_FALSE(j.ok());
  EXPECT_TRUE(j.status().IsCorruption()) << j.status().ToString();
  EXPECT_NE(j.status().message().find("page 4"), std::string::npos) << j.status().ToString();
  ASSERT_TRUE(db->Delete({}, RawKey(kJournalPagePrefix, 1, 4)).ok());
  ASSERT_TRUE(db->Put({}, RawKey(kJournalPagePrefix, 1, 4).substr(0, 10), "x").ok());
  j = LoadJournal(db.get(), 1);
  ASSERT_FALSE(j.ok());
  EXPECT_TRUE(j.status().IsCorruption());
}

}  // namespace
}  // namespace strata::collection
