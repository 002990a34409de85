// The edge file: lists written by placement and read back page by page, the
// indirection table rebuilt from the pages, bad placements refused, damage
// reported.
#include "format/edge_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "base/aligned_buffer.h"
#include "scratch_dir.h"

namespace strata::format {
namespace {

struct SmallGraph {
  explicit SmallGraph(std::uint32_t n, std::uint32_t max_degree) : lists(n) {
    std::mt19937 rng(3);
    for (auto& l : lists) {
      l.resize(rng() % (max_degree + 1));
      for (auto& id : l) id = rng() % n;
    }
  }
  EdgeListSource Source() const {
    return [this](std::uint32_t v, std::vector<std::uint32_t>* ids) {
      ids->assign(lists[v].begin(), lists[v].end());
      return Status::OK();
    };
  }
  std::vector<std::vector<std::uint32_t>> lists;
};

// Vertices in reverse order with a page break every seventh place.
std::vector<std::uint32_t> Placement(std::uint32_t n) {
  std::vector<std::uint32_t> order;
  for (std::uint32_t v = n; v-- > 0;) {
    if (order.size() % 7 == 3) order.push_back(kNoVertex);
    order.push_back(v);
  }
  return order;
}

TEST(EdgeFile, WritesReadsAndRebuildsTheIndirection) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("graph.edges");
  const std::uint32_t n = 500, capacity = EdgePageGeometry::CapacityForDegree(32);
  SmallGraph g(n, capacity);
  const std::vector<std::uint32_t> order = Placement(n);
  auto size = WriteEdgeFile(path, capacity, n, order, g.Source());
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  auto f = EdgeFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->num_vertices(), n);
  EXPECT_EQ(*size, (1 + f->num_pages()) * kSector);
  // The pages the placement makes: a break at each kNoVertex, and where
  // the next list does not fit.
  std::vector<EdgeLocation> expected(n);
  {
    std::uint32_t page = 0, slot = 0;
    std::size_t room = 0;
    for (const std::uint32_t v : order) {
      if (v == kNoVertex) {
        room = 0;
        continue;
      }
      const std::size_t bytes = f->geometry().ListBytes(g.lists[v].size());
      if (bytes > room) {
        ++page;
        slot = 0;
        room = kEdgePageRoom;
      }
      room -= bytes;
      expected[v] = {page, static_cast<std::uint16_t>(slot++), 0};
    }
    EXPECT_EQ(f->num_pages(), page);
  }
  auto where = f->ScanLocations();
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  AlignedBuffer buffer(kSector);
  auto sector = std::span<std::byte, kSector>(buffer.data(), kSector);
  for (std::size_t at = 0; at < order.size(); ++at) {
    const std::uint32_t v = order[at];
    if (v == kNoVertex) continue;
    const EdgeLocation loc = (*where)[v];
    ASSERT_EQ(loc.page, expected[v].page);
    ASSERT_EQ(loc.slot, expected[v].slot);
    auto page = f->ReadPage(loc.page, sector);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    std::uint16_t degree = 0;
    auto edges = page->Edges(loc.slot, v, &degree);
    ASSERT_TRUE(edges.ok()) << edges.status().ToString();
    ASSERT_EQ(degree, g.lists[v].size());
    for (std::size_t i = 0; i < degree; ++i) EXPECT_EQ(EdgePageReader::Id(*edges, i), g.lists[v][i]);
  }
  EXPECT_TRUE(f->ReadPage(0, sector).status().IsInvalidArgument());
  EXPECT_TRUE(f->ReadPage(f->num_pages() + 1, sector).status().IsInvalidArgument());
}

TEST(EdgeFile, PagesAreFilledByTheListsLengths) {
  // No breaks: each page takes lists until the next does not fit, so short
  // lists share a page by the dozen (a mean degree of 21 here: 92 bytes a
  // list, 44 a page).
  testutil::ScratchDir dir;
  const std::string path = dir.File("graph.edges");
  const std::uint32_t n = 2000, capacity = 42;
  SmallGraph g(n, capacity);
  std::vector<std::uint32_t> order(n);
  for (std::uint32_t v = 0; v < n; ++v) order[v] = v;
  ASSERT_TRUE(WriteEdgeFile(path, capacity, n, order, g.Source()).ok());
  auto f = EdgeFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::uint64_t bytes = 0;
  for (const auto& l : g.lists) bytes += f->geometry().ListBytes(l.size());
  const std::uint64_t fewest = (bytes + kEdgePageRoom - 1) / kEdgePageRoom;
  EXPECT_GE(f->num_pages(), fewest);
  EXPECT_LE(f->num_pages(), fewest + fewest / 20 + 1);  // each page full but for one list
  auto where = f->ScanLocations();
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  for (std::uint32_t v = 1; v < n; ++v) {  // in order, page by page
    const EdgeLocation a = (*where)[v - 1], b = (*where)[v];
    ASSERT_TRUE((b.page == a.page && b.slot == a.slot + 1) || (b.page == a.page + 1 && b.slot == 0));
  }
}

TEST(EdgeFile, PackedBaselineFilesCarryEveryVertexsVector) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("graph.edges");
  const std::uint32_t n = 300, capacity = EdgePageGeometry::CapacityForDegree(16), bytes = 96;
  SmallGraph g(n, capacity);
  const std::vector<std::uint32_t> order = Placement(n);
  auto vector_of = [](std::uint32_t v, std::size_t i) { return std::byte((v * 31 + i) % 256); };
  EdgeVectorSource vectors = [&](std::uint32_t v, std::span<std::byte> out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = vector_of(v, i);
    return Status::OK();
  };
  EXPECT_TRUE(WriteEdgeFile(path, capacity, n, order, g.Source(), bytes).status().IsInvalidArgument());
  ASSERT_TRUE(WriteEdgeFile(path, capacity, n, order, g.Source(), bytes, vectors).ok());
  auto f = EdgeFile::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->geometry().vector_bytes, bytes);
  auto where = f->ScanLocations();
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  AlignedBuffer buffer(kSector);
  auto sector = std::span<std::byte, kSector>(buffer.data(), kSector);
  for (std::uint32_t v = 0; v < n; ++v) {
    auto page = f->ReadPage((*where)[v].page, sector);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    std::uint16_t degree = 0;
    ASSERT_TRUE(page->Edges((*where)[v].slot, v, &degree).ok());
    ASSERT_EQ(degree, g.lists[v].size());
    const std::span<const std::byte> x = page->Vector((*where)[v].slot);
    ASSERT_EQ(x.size(), bytes);
    for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(x[i], vector_of(v, i)) << v;
  }
}

TEST(EdgeFile, BadPlacementsAreRefused) {
  testutil::ScratchDir dir;
  SmallGraph g(10, 4);
  std::vector<std::uint32_t> order = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_TRUE(WriteEdgeFile(dir.File("a"), 4, 10, order, g.Source()).status().IsInvalidArgument());
  order.push_back(8);  // twice
  EXPECT_TRUE(WriteEdgeFile(dir.File("b"), 4, 10, order, g.Source()).status().IsInvalidArgument());
  order.back() = 10;  // out of range
  EXPECT_TRUE(WriteEdgeFile(dir.File("c"), 4, 10, order, g.Source()).status().IsInvalidArgument());
  order.back() = 9;
  // A list longer than the capacity.
  EXPECT_TRUE(WriteEdgeFile(dir.File("d"), 2, 10, order, g.Source()).status().IsInvalidArgument());
  EXPECT_TRUE(WriteEdgeFile(dir.File("e"), 4, 10, order, g.Source()).ok());
  auto failing = [](std::uint32_t, std::vector<std::uint32_t>*) {
    return Status::IOError("source failed");
  };
  EXPECT_TRUE(WriteEdgeFile(dir.File("f"), 4, 10, order, failing).status().IsIOError());
  EXPECT_FALSE(EdgeFile::Open(dir.File("f")).ok()) << "a failed write leaves no file";
}

TEST(EdgeFile, DamageIsReported) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("graph.edges");
  SmallGraph g(100, 8);
  const std::vector<std::uint32_t> order = Placement(100);
  ASSERT_TRUE(WriteEdgeFile(path, 8, 100, order, g.Source()).ok());
  {
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(2 * kSector + 100);
    io.put('\x5a');
  }
  auto f = EdgeFile::Open(path);
  ASSERT_TRUE(f.ok());
  AlignedBuffer buffer(kSector);
  auto sector = std::span<std::byte, kSector>(buffer.data(), kSector);
  EXPECT_TRUE(f->ReadPage(2, sector).status().IsCorruption());
  EXPECT_TRUE(f->ReadPage(1, sector).ok());
  EXPECT_TRUE(f->ScanLocations().status().IsCorruption());
  // Truncated: the size no longer matches the header.
  std::filesystem::resize_file(path, 2 * kSector);  // of 3
  const Status truncated = EdgeFile::Open(path).status();
  EXPECT_TRUE(truncated.IsCorruption()) << truncated.ToString();
}

}  // namespace
}  // namespace strata::format
