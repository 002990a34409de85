// The vector file: slots written and read back where the layout says, for
// every element type; damage and bad layouts reported.
#include "format/vector_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "base/aligned_buffer.h"
#include "scratch_dir.h"

namespace strata::format {
namespace {

// Slot s's byte j: a pattern no two slots share.
std::byte Pattern(std::uint64_t slot, std::size_t j) {
  return static_cast<std::byte>((slot * 131 + j * 7 + 1) & 0xff);
}

TEST(VectorFile, SlotsRoundTripForEveryElementType) {
  testutil::ScratchDir dir;
  for (ElementType type : {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16,
                           ElementType::kUint8, ElementType::kInt8}) {
    const std::string path = dir.File(std::string(ElementTypeName(type)));
    auto layout = VectorFileLayout::Make(100, type, 123);
    ASSERT_TRUE(layout.ok());
    EXPECT_EQ(layout->vectors_per_sector, 4088u / (100 * ElementSize(type)));
    auto size = WriteVectorFile(path, *layout, [&](std::uint64_t slot, std::span<std::byte> out) {
      for (std::size_t j = 0; j < out.size(); ++j) out[j] = Pattern(slot, j);
      return Status::OK();
    });
    ASSERT_TRUE(size.ok()) << size.status().ToString();
    EXPECT_EQ(*size, (1 + layout->data_sectors()) * kSector);
    auto f = VectorFile::Open(path);
    ASSERT_TRUE(f.ok()) << f.status().ToString();
    EXPECT_EQ(f->layout().dim, 100u);
    EXPECT_EQ(f->layout().element_type, type);
    EXPECT_EQ(f->layout().num_slots, 123u);
    AlignedBuffer buffer(kSector);
    auto sector = std::span<std::byte, kSector>(buffer.data(), kSector);
    for (std::uint64_t slot = 0; slot < 123; ++slot) {
      auto bytes = f->ReadSlot(slot, sector);
      ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
      ASSERT_EQ(bytes->size(), layout->vector_bytes);
      for (std::size_t j = 0; j < bytes->size(); ++j) ASSERT_EQ((*bytes)[j], Pattern(slot, j));
    }
    EXPECT_TRUE(f->ReadSlot(123, sector).status().IsInvalidArgument());
  }
}

TEST(VectorFile, BadLayoutsAndDamage) {
  EXPECT_FALSE(VectorFileLayout::Make(0, ElementType::kFloat32, 1).ok());
  EXPECT_FALSE(VectorFileLayout::Make(1023, ElementType::kFloat32, 1).ok());  // 4,092 B
  EXPECT_TRUE(VectorFileLayout::Make(1022, ElementType::kFloat32, 1).ok());   // 4,088 B
  testutil::ScratchDir dir;
  const std::string path = dir.File("vectors");
  auto layout = VectorFileLayout::Make(128, ElementType::kFloat32, 20);  // 7 a sector, 3 sectors
  ASSERT_TRUE(layout.ok());
  auto zero = [](std::uint64_t, std::span<std::byte> out) {
    std::fill(out.begin(), out.end(), std::byte{0});
    return Status::OK();
  };
  ASSERT_TRUE(WriteVectorFile(path, *layout, zero).ok());
  {
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(2 * kSector + 600);  // slot 8 (sector 2, second slot)
    io.put('\x01');
  }
  auto f = VectorFile::Open(path);
  ASSERT_TRUE(f.ok());
  AlignedBuffer buffer(kSector);
  auto sector = std::span<std::byte, kSector>(buffer.data(), kSector);
  EXPECT_TRUE(f->ReadSlot(8, sector).status().IsCorruption());
  EXPECT_TRUE(f->ReadSlot(9, sector).status().IsCorruption());  // same sector
  EXPECT_TRUE(f->ReadSlot(0, sector).ok());
  EXPECT_TRUE(f->ReadSlot(19, sector).ok());
  std::filesystem::resize_file(path, 3 * kSector);  // of 4
  EXPECT_TRUE(VectorFile::Open(path).status().IsCorruption());
  auto failing = [](std::uint64_t, std::span<std::byte>) { return Status::IOError("no data"); };
  EXPECT_TRUE(WriteVectorFile(dir.File("failed"), *layout, failing).status().IsIOError());
  EXPECT_FALSE(std::filesystem::exists(dir.File("failed")));
}

}  // namespace
}  // namespace strata::format
