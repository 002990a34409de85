#include "format/graph_layout.h"

#include <algorithm>
#include <cstring>
#include <tuple>
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

// (dimension, variant): 0 = packed; 1 = shuffled (external ids, a permuted
// slot order with empty slots); 2 = all-in-storage (neighbours' codes inline).
class NodeFileTest : public ::testing::TestWithParam<std::tuple<std::uint32_t, int>> {};

TEST_P(NodeFileTest, WriteOpenDecodeAndDetectCorruption) {
  const auto [dim, variant] = GetParam();
  const std::uint64_t n = 257;
  const std::uint32_t R = 16;
  const std::uint32_t code_bytes = variant == 2 ? 8 : 0;
  GraphLayoutSpec spec{dim, ElementType::kFloat32, R, n, variant == 1 ? n + 13 : 0, variant == 1,
                       code_bytes};
  auto layout = GraphLayout::Make(spec);
  ASSERT_TRUE(layout.ok());
  const std::uint64_t slots = layout->num_slots;
  std::mt19937_64 rng(dim * 3 + variant);
  // Slot -> row: identity, or a random permutation with 13 empty slots.
  std::vector<VectorId> row_of(slots);
  for (std::uint64_t s = 0; s < slots; ++s) row_of[s] = s < n ? s : kInvalidVectorId;
  if (variant == 1) std::shuffle(row_of.begin(), row_of.end(), rng);
  std::vector<std::uint64_t> slot_of(n);
  for (std::uint64_t s = 0; s < slots; ++s) {
    if (row_of[s] != kInvalidVectorId) slot_of[row_of[s]] = s;
  }
  std::vector<float> vectors(n * dim);
  for (auto& v : vectors) v = static_cast<float>(rng() % 1000) / 7.0f;
  std::vector<std::vector<VectorId>> adj(n);  // by row, as slots
  std::vector<std::uint8_t> codes(n * 8);
  for (auto& c : codes) c = static_cast<std::uint8_t>(rng());
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::size_t deg = rng() % (R + 1);
    for (std::size_t j = 0; j < deg; ++j) adj[i].push_back(slot_of[rng() % n]);
  }
  auto expected_codes = [&](std::uint64_t row) {
    std::vector<std::uint8_t> c;
    for (VectorId nb : adj[row]) {
      const VectorId r = row_of[nb];
      c.insert(c.end(), codes.begin() + r * 8, codes.begin() + r * 8 + 8);
    }
    return c;
  };
  testutil::ScratchDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("graph.nodes");
  auto size = WriteGraphNodeFile(path, *layout, [&](std::uint64_t s, NodeContent* c) {
    const VectorId row = row_of[s];
    if (row == kInvalidVectorId) {
      c->empty = true;
      return Status::OK();
    }
    std::memcpy(c->vector.data(), vectors.data() + row * dim, c->vector.size());
    c->neighbours = adj[row];
    c->external_id = row;
    if (code_bytes) c->codes = expected_codes(row);
    return Status::OK();
  });
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, (1 + layout->data_sectors()) * kSector);
  auto file = GraphNodeFile::Open(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->layout().num_slots, slots);
  EXPECT_EQ(file->layout().external_ids, variant == 1);
  const std::uint64_t sectors = file->layout().data_sectors();
  AlignedBuffer all_buf(sectors * kSector);
  std::span<std::byte> all(all_buf.data(), all_buf.size());
  ASSERT_TRUE(file->ReadSectors(1, sectors, all).ok());
  std::vector<std::byte> scratch;
  for (std::uint64_t s = 0; s < slots; ++s) {
    const RecordLocation loc = file->layout().Locate(s);
    NodeRecordView view;
    auto buf = all.subspan((loc.sector - 1) * kSector, loc.sectors * kSector);
    ASSERT_TRUE(file->Decode(s, loc, buf, &scratch, &view).ok());
    const VectorId row = row_of[s];
    ASSERT_EQ(view.external_id, row);  // the id -> slot map round-trips
    if (row == kInvalidVectorId) continue;
    ASSERT_EQ(std::memcmp(view.vector.data(), vectors.data() + row * dim, dim * 4), 0);
    ASSERT_EQ(view.degree, adj[row].size());
    for (std::uint32_t j = 0; j < view.degree; ++j) ASSERT_EQ(view.neighbour(j), adj[row][j]);
    if (code_bytes) {
      ASSERT_NE(view.codes, nullptr);
      const std::vector<std::uint8_t> want = expected_codes(row);
      // (memcmp with an empty vector's null data() is undefined: compare only real codes.)
      if (!want.empty()) {
        ASSERT_EQ(std::memcmp(view.codes, want.data(), want.size()), 0);
      }
    } else {
      ASSERT_EQ(view.codes, nullptr);
    }
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

TEST(GraphLayout, ShuffledAndInlineGeometry) {
  // 128-d float, R 64, external ids: 772 + 4 = 776 bytes, still 5 per sector.
  auto s = GraphLayout::Make(GraphLayoutSpec{128, ElementType::kFloat32, 64, 1000, 1003, true, 0});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->record_bytes, 776u);
  EXPECT_EQ(s->records_per_sector, 5u);
  EXPECT_EQ(s->data_sectors(), 201u);  // 1003 slots
  EXPECT_EQ(s->PageOf(12), 2u);
  // All-in-storage with 32-byte codes: 772 + 64 * 32 = 2820 bytes, 1 per sector.
  auto a = GraphLayout::Make(GraphLayoutSpec{128, ElementType::kFloat32, 64, 1000, 0, false, 32});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->record_bytes, 2820u);
  EXPECT_EQ(a->records_per_sector, 1u);
  auto back = GraphLayout::DecodeFields(a->EncodeFields(), "x");
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->code_bytes, 32u);
  // Empty slots without external ids cannot be told apart: rejected.
  EXPECT_FALSE(
      GraphLayout::Make(GraphLayoutSpec{8, ElementType::kFloat32, 4, 10, 12, false, 0}).ok());
}

INSTANTIATE_TEST_SUITE_P(DimsAndVariants, NodeFileTest,
                         ::testing::Combine(::testing::Values(3u, 128u, 1100u),
                                            ::testing::Values(0, 1, 2)));

}  // namespace
}  // namespace strata::format
