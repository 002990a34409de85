#include "format/ivf_records_file.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "base/aligned_buffer.h"
#include "format/ivf_ram_file.h"
#include "scratch_dir.h"

namespace strata::format {
namespace {

// Record of position pos: bytes derived from pos, so every record is distinct.
Status FillRecord(std::size_t bytes, std::uint64_t pos, std::uint8_t* out) {
  for (std::size_t i = 0; i < bytes; ++i)
    out[i] = static_cast<std::uint8_t>((pos * 131 + i * 7) ^ (pos >> 8));
  return Status::OK();
}

void CheckEveryRecordWhereItsPositionSays(std::size_t record_bytes) {
  testutil::ScratchDir dir;
  auto packing = ivf::PagePacking::Make(record_bytes, kSectorPayload);
  ASSERT_TRUE(packing.ok());
  const std::vector<std::uint64_t> sizes = {0, 57, 1, 200, 28};
  const std::string path = dir.File("ivf.records");
  auto size = WriteIvfRecordsFile(path, *packing, sizes, [&](std::uint64_t pos, std::uint8_t* out) {
    return FillRecord(record_bytes, pos, out);
  });
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  auto f = IvfRecordsFile::Open(path, sizes);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(*size, (1 + f->num_units() * packing->pages_per_unit()) * kSector);
  AlignedBuffer unit(f->UnitBytes());
  std::vector<std::uint8_t> want(record_bytes), scratch(record_bytes);
  std::uint64_t pos = 0;
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    for (std::uint64_t i = 0; i < sizes[c]; ++i, ++pos) {
      const ivf::RecordPlace place = f->packing().Locate(f->first_unit()[c], i);
      ASSERT_TRUE(f->ReadUnit(place.unit, std::span<std::byte>(unit.data(), unit.size())).ok());
      const std::uint8_t* got = f->packing().Gather(
          reinterpret_cast<const std::uint8_t*>(unit.data()), place.slot, kSector, scratch.data());
      ASSERT_TRUE(FillRecord(record_bytes, pos, want.data()).ok());
      ASSERT_EQ(std::vector<std::uint8_t>(got, got + record_bytes), want) << c << " " << i;
    }
  }
  // Opened against other cluster sizes: rejected.
  const std::vector<std::uint64_t> other = {0, 57, 2, 199, 28};
  EXPECT_EQ(IvfRecordsFile::Open(path, other).status().code(), StatusCode::kCorruption);
}

TEST(IvfRecordsFile, PageOfEachRecordFollowsFromItsPosition) {
  CheckEveryRecordWhereItsPositionSays(144);
  CheckEveryRecordWhereItsPositionSays(4088);
  CheckEveryRecordWhereItsPositionSays(5000);  // two pages per record
}

TEST(IvfRecordsFile, DamagedPageIsDetected) {
  testutil::ScratchDir dir;
  auto packing = ivf::PagePacking::Make(100, kSectorPayload);
  ASSERT_TRUE(packing.ok());
  const std::vector<std::uint64_t> sizes = {100};
  const std::string path = dir.File("ivf.records");
  ASSERT_TRUE(WriteIvfRecordsFile(path, *packing, sizes, [](std::uint64_t pos, std::uint8_t* out) {
                return FillRecord(100, pos, out);
              }).ok());
  // Flip one byte in data page 1 (sector 2).
  {
    std::FILE* fp = std::fopen(path.c_str(), "r+b");
    ASSERT_NE(fp, nullptr);
    std::fseek(fp, 2 * 4096 + 10, SEEK_SET);
    const int c = std::fgetc(fp);
    std::fseek(fp, 2 * 4096 + 10, SEEK_SET);
    std::fputc(c ^ 0xFF, fp);
    std::fclose(fp);
  }
  auto f = IvfRecordsFile::Open(path, sizes);
  ASSERT_TRUE(f.ok());
  AlignedBuffer unit(f->UnitBytes());
  EXPECT_TRUE(f->ReadUnit(0, std::span<std::byte>(unit.data(), unit.size())).ok());
  EXPECT_EQ(f->ReadUnit(1, std::span<std::byte>(unit.data(), unit.size())).code(),
            StatusCode::kCorruption);
}

TEST(IvfRamFile, RoundTripAndDamage) {
  testutil::ScratchDir dir;
  IvfRamParts p;
  p.quantizer = {1, 2, 3};
  p.coarse = {4, 5};
  p.centroids = {0.5f, -1.0f};
  p.cluster_sizes = {7, 9};
  p.ids = {3, 1, 2};
  p.ram_blocks = std::vector<std::uint8_t>(100, 9);
  const std::string path = dir.File("ivf.ram");
  ASSERT_TRUE(WriteIvfRamFile(path, p).ok());
  auto back = ReadIvfRamFile(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->quantizer, p.quantizer);
  EXPECT_EQ(back->coarse, p.coarse);
  EXPECT_EQ(back->centroids, p.centroids);
  EXPECT_EQ(back->cluster_sizes, p.cluster_sizes);
  EXPECT_EQ(back->ids, p.ids);
  EXPECT_EQ(back->ram_blocks, p.ram_blocks);
  std::FILE* fp = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(fp, nullptr);
  std::fseek(fp, -5, SEEK_END);
  std::fputc(0x77, fp);
  std::fclose(fp);
  EXPECT_EQ(ReadIvfRamFile(path).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace strata::format
