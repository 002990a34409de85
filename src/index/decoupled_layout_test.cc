// The decoupled layout written from built graph indexes (packed and
// page-shuffled): every vertex's edge list and vector equal its node
// record's, found through the indirection table the edge file rebuilds.
#include "strata/graph_index.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/aligned_buffer.h"
#include "format/edge_file.h"
#include "format/graph_node_file.h"
#include "format/vector_file.h"
#include "scratch_dir.h"
#include "strata/graph_index.h"
#include "synthetic_dataset.h"

namespace strata {
namespace {

void ExpectSameGraph(const std::string& index_dir, const std::string& out_dir) {
  auto nodes = format::GraphNodeFile::Open(index_dir + "/graph.nodes");
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  auto edges = format::EdgeFile::Open(out_dir + "/graph.edges");
  ASSERT_TRUE(edges.ok()) << edges.status().ToString();
  auto vectors = format::VectorFile::Open(out_dir + "/graph.vectors");
  ASSERT_TRUE(vectors.ok()) << vectors.status().ToString();
  const format::GraphLayout& layout = nodes->layout();
  ASSERT_EQ(edges->num_vertices(), layout.num_slots);
  ASSERT_EQ(vectors->layout().num_slots, layout.num_slots);
  EXPECT_EQ(edges->geometry().capacity, format::EdgePageGeometry::CapacityForDegree(layout.max_degree));
  auto where = edges->ScanLocations();
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  AlignedBuffer node_buf(16 * format::kSector), edge_buf(format::kSector), vec_buf(format::kSector);
  auto edge_sector = std::span<std::byte, format::kSector>(edge_buf.data(), format::kSector);
  auto vec_sector = std::span<std::byte, format::kSector>(vec_buf.data(), format::kSector);
  std::vector<std::byte> scratch;
  std::uint64_t listed = 0;
  for (std::uint64_t slot = 0; slot < layout.num_slots; ++slot) {
    const format::RecordLocation loc = layout.Locate(slot);
    auto span = std::span<std::byte>(node_buf.data(), loc.sectors * format::kSector);
    ASSERT_TRUE(nodes->ReadSectors(loc.sector, loc.sectors, span).ok());
    format::NodeRecordView rec;
    ASSERT_TRUE(nodes->Decode(slot, loc, span, &scratch, &rec).ok());
    const bool empty = rec.external_id == kInvalidVectorId;
    auto page = edges->ReadPage((*where)[slot].page, edge_sector);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    std::uint16_t degree = 0;
    auto list = page->Edges((*where)[slot].slot, static_cast<std::uint32_t>(slot), &degree);
    ASSERT_TRUE(list.ok()) << list.status().ToString();
    ASSERT_EQ(degree, empty ? 0u : rec.degree) << "slot " << slot;
    for (std::uint32_t i = 0; i < degree; ++i) {
      ASSERT_EQ(format::EdgePageReader::Id(*list, i), rec.neighbour(i)) << "slot " << slot;
    }
    listed += degree;
    auto v = vectors->ReadSlot(slot, vec_sector);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    if (!empty) {
      ASSERT_EQ(std::memcmp(v->data(), rec.vector.data(), v->size()), 0) << "slot " << slot;
    }
  }
  EXPECT_GT(listed, layout.num_nodes * 8) << "the lists are not empty";
}

TEST(DecoupledLayout, SplitsPackedAndShuffledNodeFiles) {
  testutil::ScratchDir dir;
  const testutil::TestDataset d =
      testutil::MakeTestDataset(dir, Metric::kL2, ElementType::kFloat32, 3000, 24, 10, 5);
  for (bool shuffle : {false, true}) {
    GraphBuildOptions b;
    b.R = 24;
    b.L = 48;
    b.threads = 2;
    b.page_shuffle = shuffle;
    const std::string idx = dir.File(shuffle ? "shuffled" : "packed");
    auto report = BuildGraphIndex(d.base, idx, b);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    auto split = WriteDecoupledLayout(idx, dir.path());
    ASSERT_TRUE(split.ok()) << split.status().ToString();
    EXPECT_GE(split->vertices, 3000u);
    EXPECT_GT(split->edge_pages, 0u);
    ExpectSameGraph(idx, dir.path());
  }
  EXPECT_FALSE(WriteDecoupledLayout(dir.File("missing"), dir.path()).ok());
}

TEST(DecoupledLayout, ShuffledEdgePagesHoldNeighboursTogether) {
  testutil::ScratchDir dir;
  const testutil::TestDataset d =
      testutil::MakeTestDataset(dir, Metric::kL2, ElementType::kFloat32, 3000, 24, 10, 5);
  GraphBuildOptions b;
  b.R = 24;
  b.L = 48;
  b.threads = 2;
  const std::string idx = dir.File("packed");
  ASSERT_TRUE(BuildGraphIndex(d.base, idx, b).ok());
  auto in_order = WriteDecoupledLayout(idx, dir.path());
  ASSERT_TRUE(in_order.ok()) << in_order.status().ToString();
  EXPECT_EQ(in_order->overlap_after, in_order->overlap_before);
  auto shuffled = WriteDecoupledLayout(idx, dir.path(), {.shuffle = true, .threads = 2});
  ASSERT_TRUE(shuffled.ok()) << shuffled.status().ToString();
  EXPECT_EQ(shuffled->overlap_before, in_order->overlap_before);
  EXPECT_GT(shuffled->overlap_after, in_order->overlap_after + 0.1);
  // Lists are packed by length: in order each page takes lists until the
  // next does not fit, shuffled each page a group sized to leave a little
  // room (and the overflow passed on).
  EXPECT_GE(shuffled->edge_pages, in_order->edge_pages);
  EXPECT_LE(shuffled->edge_pages, in_order->edge_pages * 1.1);
  ExpectSameGraph(idx, dir.path());  // every list intact wherever it lives
}

}  // namespace
}  // namespace strata
