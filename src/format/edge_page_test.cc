// Edge pages (the decoupled graph layout's adjacency pages): geometry,
// lists written and read back, and every kind of damage reported as
// Corruption rather than followed.
#include "format/edge_page.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <vector>

#include "format/le_coding.h"

namespace strata::format {
namespace {

TEST(EdgePage, GeometryFollowsTheCapacity) {
  EXPECT_EQ(EdgePageGeometry::CapacityForDegree(64), 84u);  // ceil(1.3 x 64)
  EXPECT_EQ(EdgePageGeometry::CapacityForDegree(32), 42u);
  EXPECT_EQ(EdgePageGeometry::CapacityForDegree(10), 13u);
  auto g = EdgePageGeometry::ForCapacity(84);
  ASSERT_TRUE(g.ok());
  EXPECT_FALSE(g->fixed_size());
  EXPECT_EQ(g->ListBytes(36), 8u + 36 * 4);  // a list takes its length, not the capacity
  EXPECT_EQ(g->slots_per_page, (4088u - 16) / 8);  // lists without edges
  EXPECT_FALSE(EdgePageGeometry::ForCapacity(0).ok());
  EXPECT_FALSE(EdgePageGeometry::ForCapacity(1017).ok());  // 16 + 8 + 4,068 > 4,088
  auto largest = EdgePageGeometry::ForCapacity(1016);
  ASSERT_TRUE(largest.ok());
  EXPECT_EQ(largest->ListBytes(1016), 4072u);
}

struct Page {
  explicit Page(std::uint32_t capacity) : g(*EdgePageGeometry::ForCapacity(capacity)) {}
  EdgePageGeometry g;
  std::array<std::byte, kSector> sector{};
  std::span<std::byte, kSectorPayload> payload() {
    return std::span<std::byte, kSectorPayload>(sector.data(), kSectorPayload);
  }
};

TEST(EdgePage, ListsRoundTripAndSlotsAreReused) {
  Page page(84);
  EdgePageWriter w(page.g, page.payload());
  w.Clear(7);
  std::vector<std::uint32_t> full(84);
  std::iota(full.begin(), full.end(), 1000u);
  const std::vector<std::uint32_t> few = {5, 9, 2};
  ASSERT_TRUE(w.Put(0, 42, full).ok());
  ASSERT_TRUE(w.Put(10, 43, few).ok());
  ASSERT_TRUE(w.Put(3, 44, {}).ok());  // an isolated vertex
  ASSERT_TRUE(w.Put(10, 45, few).ok());  // the slot passes to another vertex
  auto r = EdgePageReader::Open(page.g, page.payload());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->epoch(), 7u);
  EXPECT_EQ(r->slots(), 11u);
  EXPECT_EQ(r->vertex(1), kNoVertex);
  EXPECT_EQ(r->vertex(99), kNoVertex);
  std::uint16_t degree = 0;
  auto edges = r->Edges(0, 42, &degree);
  ASSERT_TRUE(edges.ok());
  ASSERT_EQ(degree, 84u);
  for (std::size_t i = 0; i < degree; ++i) EXPECT_EQ(EdgePageReader::Id(*edges, i), 1000u + i);
  edges = r->Edges(10, 45, &degree);
  ASSERT_TRUE(edges.ok());
  ASSERT_EQ(degree, 3u);
  EXPECT_EQ(EdgePageReader::Id(*edges, 2), 2u);
  edges = r->Edges(3, 44, &degree);
  ASSERT_TRUE(edges.ok());
  EXPECT_EQ(degree, 0u);
}

TEST(EdgePage, ListsArePackedByTheirLength) {
  // Lists of 36 ids (152 bytes with their entry): 26 a page, where fixed
  // slots of the capacity (84 ids) held 11.
  Page page(84);
  EdgePageWriter w(page.g, page.payload());
  w.Clear(1);
  std::vector<std::uint32_t> ids(36);
  std::uint32_t appended = 0;
  while (w.Fits(ids.size())) {
    std::iota(ids.begin(), ids.end(), 100 * appended);
    auto slot = w.Append(appended, ids);
    ASSERT_TRUE(slot.ok()) << slot.status().ToString();
    EXPECT_EQ(*slot, appended);
    ++appended;
  }
  EXPECT_EQ(appended, 26u);
  EXPECT_EQ(w.Room(), 4072u - 26 * 152);
  EXPECT_TRUE(w.Append(99, ids).status().IsOutOfRange());
  EXPECT_TRUE(w.Fits(20));  // a shorter one still does
  ASSERT_TRUE(w.Append(26, std::span(ids).first(20)).ok());
  auto r = EdgePageReader::Open(page.g, page.payload());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->slots(), 27u);
  std::vector<std::uint32_t> got;
  for (std::uint32_t s = 0; s < 26; ++s) {
    ASSERT_TRUE(r->ReadList(s, s, &got).ok());
    ASSERT_EQ(got.size(), 36u);
    EXPECT_EQ(got.front(), 100 * s);
    EXPECT_EQ(got.back(), 100 * s + 35);
  }
  ASSERT_TRUE(r->ReadList(26, 26, &got).ok());
  EXPECT_EQ(got.size(), 20u);
}

TEST(EdgePage, BadWritesAreInvalidArgument) {
  Page page(16);
  EdgePageWriter w(page.g, page.payload());
  w.Clear(0);
  std::vector<std::uint32_t> ids(17, 1);
  EXPECT_TRUE(w.Put(0, 1, ids).IsInvalidArgument());
  ids.resize(16);
  EXPECT_TRUE(w.Put(page.g.slots_per_page, 1, ids).IsOutOfRange());  // its directory does not fit
  EXPECT_TRUE(w.Put(0, kNoVertex, ids).IsInvalidArgument());
  EXPECT_TRUE(w.Put(0, 1, ids).ok());
}

TEST(EdgePage, DamageIsCorruption) {
  Page page(20);
  EdgePageWriter w(page.g, page.payload());
  w.Clear(1);
  const std::vector<std::uint32_t> ids = {1, 2, 3};
  ASSERT_TRUE(w.Put(2, 77, ids).ok());
  std::uint16_t degree = 0;
  {
    auto r = EdgePageReader::Open(page.g, page.payload());
    ASSERT_TRUE(r.ok());
    // A stale indirection: the slot belongs to another vertex, or none.
    EXPECT_TRUE(r->Edges(2, 78, &degree).status().IsCorruption());
    EXPECT_TRUE(r->Edges(3, 77, &degree).status().IsCorruption());
  }
  auto damaged = [&](std::size_t offset, std::byte value) {
    Page copy = page;
    copy.sector[offset] = value;
    return EdgePageReader::Open(copy.g, copy.payload());
  };
  EXPECT_TRUE(damaged(0, std::byte{0}).status().IsCorruption());      // magic
  EXPECT_TRUE(damaged(4, std::byte{9}).status().IsCorruption());      // version
  EXPECT_TRUE(damaged(6, std::byte{21}).status().IsCorruption());     // capacity
  EXPECT_TRUE(damaged(9, std::byte{2}).status().IsCorruption());      // a directory past the page
  // Another file's geometry.
  auto other = EdgePageGeometry::ForCapacity(21);
  EXPECT_TRUE(EdgePageReader::Open(*other, page.payload()).status().IsCorruption());
  // A degree past the capacity, a list in the directory or past the page.
  auto entry_damaged = [&](std::size_t at, std::uint16_t value) {
    Page copy = page;
    std::byte* entry = copy.sector.data() + kEdgePageHeader + 2 * kEdgeSlotHeader;
    std::memcpy(entry + at, &value, 2);
    auto r = EdgePageReader::Open(copy.g, copy.payload());
    EXPECT_TRUE(r.ok());
    return r->Edges(2, 77, &degree).status();
  };
  EXPECT_TRUE(entry_damaged(6, 21).IsCorruption());                 // degree
  EXPECT_TRUE(entry_damaged(4, kEdgePageHeader).IsCorruption());    // offset inside the directory
  EXPECT_TRUE(entry_damaged(4, kSectorPayload - 8).IsCorruption()); // offset: 3 ids past the end
  EXPECT_TRUE(entry_damaged(6, 3).ok());                            // untouched
}

TEST(EdgePage, PackedBaselineSlotsCarryTheirVectors) {
  // d 128 float32 beside room for 84 ids: fixed 856-byte records, 4 a page.
  auto g = EdgePageGeometry::ForCapacity(84, 512);
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(g->fixed_size());
  EXPECT_EQ(g->ListBytes(0), 8u + 84 * 4 + 512);
  EXPECT_EQ(g->ListBytes(3), 8u + 84 * 4 + 512);
  EXPECT_EQ(g->slots_per_page, 4u);
  EXPECT_FALSE(EdgePageGeometry::ForCapacity(84, 4000).ok());
  EXPECT_FALSE(EdgePageGeometry::ForCapacity(84, 70000).ok());  // not truncated to 16 bits
  std::array<std::byte, kSector> sector{};
  auto payload = std::span<std::byte, kSectorPayload>(sector.data(), kSectorPayload);
  EdgePageWriter w(*g, payload);
  w.Clear(2);
  std::vector<std::byte> a(512), b(512);
  for (std::size_t i = 0; i < 512; ++i) {
    a[i] = std::byte(i * 7 + 1);
    b[i] = std::byte(255 - i % 251);
  }
  const std::vector<std::uint32_t> ids = {4, 8, 15};
  ASSERT_TRUE(w.Put(3, 16, ids, a).ok());
  ASSERT_TRUE(w.Put(0, 23, {}, b).ok());
  EXPECT_TRUE(w.Put(1, 42, ids).IsInvalidArgument());  // no vector
  EXPECT_TRUE(w.Put(1, 42, ids, std::span(a).first(511)).IsInvalidArgument());
  auto r = EdgePageReader::Open(*g, payload);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::uint16_t degree = 0;
  auto edges = r->Edges(3, 16, &degree);
  ASSERT_TRUE(edges.ok());
  ASSERT_EQ(degree, 3u);
  EXPECT_EQ(EdgePageReader::Id(*edges, 2), 15u);
  const auto va = r->Vector(3), vb = r->Vector(0);
  EXPECT_TRUE(std::equal(va.begin(), va.end(), a.begin(), a.end()));
  EXPECT_TRUE(std::equal(vb.begin(), vb.end(), b.begin(), b.end()));
  // ReadList decodes a whole slot: ids and (when asked) the vector; a slot
  // of another vertex is Corruption and leaves nothing half read.
  std::vector<std::uint32_t> got = {99};
  std::vector<std::byte> vector;
  ASSERT_TRUE(r->ReadList(3, 16, &got, &vector).ok());
  EXPECT_EQ(got, ids);
  EXPECT_EQ(vector, a);
  ASSERT_TRUE(r->ReadList(0, 23, &got).ok());
  EXPECT_TRUE(got.empty());
  EXPECT_TRUE(r->ReadList(0, 16, &got, &vector).IsCorruption());
  EXPECT_EQ(vector, a);
  // A decoupled reader refuses a packed page and the other way round.
  auto decoupled = EdgePageGeometry::ForCapacity(84);
  EXPECT_TRUE(EdgePageReader::Open(*decoupled, payload).status().IsCorruption());
  Page plain(84);
  EdgePageWriter(plain.g, plain.payload()).Clear(0);
  EXPECT_TRUE(EdgePageReader::Open(*g, plain.payload()).status().IsCorruption());
  // Decoupled slots take no vector.
  EXPECT_TRUE(EdgePageWriter(plain.g, plain.payload()).Put(0, 1, ids, a).IsInvalidArgument());
}

TEST(EdgePage, SealedInASectorFile) {
  // The sector trailer catches what the page header cannot: a flipped id.
  Page page(84);
  EdgePageWriter w(page.g, page.payload());
  w.Clear(3);
  const std::vector<std::uint32_t> ids = {11, 12, 13};
  ASSERT_TRUE(w.Put(0, 5, ids).ok());
  SealSector(page.sector, FileKind::kEdgePages, 9);
  EXPECT_TRUE(VerifySector(page.sector, FileKind::kEdgePages, 9, "edges").ok());
  EXPECT_FALSE(VerifySector(page.sector, FileKind::kEdgePages, 10, "edges").ok());  // misplaced
  page.sector[kEdgePageHeader + kEdgeSlotHeader + 4] ^= std::byte{1};
  EXPECT_FALSE(VerifySector(page.sector, FileKind::kEdgePages, 9, "edges").ok());
}

}  // namespace
}  // namespace strata::format
