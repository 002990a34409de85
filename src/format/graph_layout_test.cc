#include "format/graph_layout.h"

#include <cstring>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "base/aligned_buffer.h"
#include "format/graph_node_file.h"
#include "scratch_dir.h"

namespace strata::format {
namespace {

TEST(GraphLayout, GeometryMatchesDocumentedFormulas) {
  // 128-d float, R = 64: 512 + 4 + 256 = 772 bytes, 5 per 4088-byte payload.
  auto l = GraphLayout::Make(128, ElementType::kFloat32, 64, 1000);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->record_bytes, 772u);
  EXPECT_EQ(l->records_per_sector, 5u);
  EXPECT_EQ(l->data_sectors(), 200u);
  EXPECT_EQ(l->Locate(7).sector, 2u);
  EXPECT_EQ(l->Locate(7).offset, 2u * 772);
  // 1536-d float: 6144 + 4 + 256 bytes -> 2 sectors per record.
  auto big = GraphLayout::Make(1536, ElementType::kFloat32, 64, 10);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->records_per_sector, 0u);
  EXPECT_EQ(big->sectors_per_record, 2u);
  EXPECT_EQ(big->Locate(3).sector, 7u);
  // Past 2^32 - 1 nodes, ids become 8 bytes instead of capping the index.
  auto huge = GraphLayout::Make(16, ElementType::kUint8, 32, 5'000'000'000ull);
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->id_bytes, 8u);
  EXPECT_FALSE(GraphLayout::Make(0, ElementType::kFloat32, 64, 10).ok());
  EXPECT_FALSE(GraphLayout::Make(8, ElementType::kFloat32, 0, 10).ok());
}

TEST(GraphLayout, FieldsRoundTripAndRejectInconsistency) {
  auto l = GraphLayout::Make(100, ElementType::kInt8, 48, 12345);
  ASSERT_TRUE(l.ok());
  std::string fields = l->EncodeFields();
  auto back = GraphLayout::DecodeFields(fields, "x");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->record_bytes, l->record_bytes);
  fields[20] ^= 1;  // record_bytes
  EXPECT_TRUE(GraphLayout::DecodeFields(fields, "x").status().IsCorruption());
}

class NodeFileTest : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(NodeFileTest, WriteOpenDecodeAndDetectCorruption) {
  const std::uint32_t dim = GetParam();
  const std::uint64_t n = 257;
  const std::uint32_t R = 16;
  auto layout = GraphLayout::Make(dim, ElementType::kFloat32, R, n);
  ASSERT_TRUE(layout.ok());
  std::mt19937_64 rng(dim);
  std::vector<float> vectors(n * dim);
  for (auto& v : vectors) v = static_cast<float>(rng() % 1000) / 7.0f;
  std::vector<std::vector<VectorId>> adj(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::size_t deg = rng() % (R + 1);
    for (std::size_t j = 0; j < deg; ++j) adj[i].push_back(rng() % n);
  }
  testutil::ScratchDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("graph.nodes");
  auto size = WriteGraphNodeFile(path, *layout, [&](std::uint64_t i, std::span<std::byte> vec,
                                                    std::vector<VectorId>* nbrs) {
    std::memcpy(vec.data(), vectors.data() + i * dim, vec.size());
    *nbrs = adj[i];
    return Status::OK();
  });
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, (1 + layout->data_sectors()) * kSector);
  auto file = GraphNodeFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  const std::uint64_t sectors = file->layout().data_sectors();
  AlignedBuffer all_buf(sectors * kSector);
  std::span<std::byte> all(all_buf.data(), all_buf.size());
  ASSERT_TRUE(file->ReadSectors(1, sectors, all).ok());
  std::vector<std::byte> scratch;
  for (std::uint64_t i = 0; i < n; ++i) {
    const RecordLocation loc = file->layout().Locate(i);
    NodeRecordView view;
    auto buf = all.subspan((loc.sector - 1) * kSector, loc.sectors * kSector);
    ASSERT_TRUE(file->Decode(loc, buf, &scratch, &view).ok());
    ASSERT_EQ(std::memcmp(view.vector.data(), vectors.data() + i * dim, dim * 4), 0);
    ASSERT_EQ(view.degree, adj[i].size());
    for (std::uint32_t j = 0; j < view.degree; ++j) ASSERT_EQ(view.neighbour(j), adj[i][j]);
  }
  // Flip a byte in the middle of sector 2: reading it reports Corruption.
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 2 * kSector + 123, SEEK_SET);
  const int c = std::fgetc(f);
  std::fseek(f, 2 * kSector + 123, SEEK_SET);
  std::fputc(c ^ 0xFF, f);
  std::fclose(f);
  auto reopened = GraphNodeFile::Open(path);
  ASSERT_TRUE(reopened.ok());
  Status bad = reopened->ReadSectors(1, sectors, all);
  EXPECT_TRUE(bad.IsCorruption());
  EXPECT_NE(bad.message().find("sector 2"), std::string::npos);
  // A truncated file fails at open.
  ASSERT_EQ(truncate(path.c_str(), static_cast<off_t>(*size - kSector)), 0);
  EXPECT_TRUE(GraphNodeFile::Open(path).status().IsCorruption());
}

INSTANTIATE_TEST_SUITE_P(Dims, NodeFileTest, ::testing::Values(3u, 128u, 1100u));

}  // namespace
}  // namespace strata::format
