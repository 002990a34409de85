#include "format/sector_file.h"

#include <cstring>
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "base/aligned_buffer.h"
#include "format/blob_file.h"
#include "scratch_dir.h"

namespace strata::format {
namespace {

TEST(SectorFile, HeaderRoundTripAndChecks) {
  AlignedBuffer buf(kSector);
  std::span<std::byte, kSector> sector(buf.data(), kSector);
  FileHeader h;
  h.kind = FileKind::kGraphNodes;
  h.version = 1;
  h.num_sectors = 77;
  const std::string fields = "hello fields";
  ASSERT_TRUE(EncodeHeaderSector(h, std::as_bytes(std::span<const char>(fields)), sector).ok());
  FileHeader got;
  std::string got_fields;
  ASSERT_TRUE(DecodeHeaderSector(sector, FileKind::kGraphNodes, 1, "f", &got, &got_fields).ok());
  EXPECT_EQ(got.num_sectors, 77u);
  EXPECT_EQ(got_fields, fields);
  // Wrong kind, newer version, flipped bit, bad magic.
  EXPECT_TRUE(DecodeHeaderSector(sector, FileKind::kPqCodes, 1, "f", &got, &got_fields)
                  .IsCorruption());
  h.version = 2;
  ASSERT_TRUE(EncodeHeaderSector(h, {}, sector).ok());
  EXPECT_TRUE(DecodeHeaderSector(sector, FileKind::kGraphNodes, 1, "f", &got, &got_fields)
                  .IsNotSupported());
  sector[100] ^= std::byte{1};
  EXPECT_TRUE(DecodeHeaderSector(sector, FileKind::kGraphNodes, 9, "f", &got, &got_fields)
                  .IsCorruption());
  sector[0] = std::byte{'X'};
  Status s = DecodeHeaderSector(sector, FileKind::kGraphNodes, 9, "f", &got, &got_fields);
  EXPECT_NE(s.message().find("magic"), std::string::npos);
}

TEST(SectorFile, TrailerDetectsDamageAndMisplacement) {
  AlignedBuffer buf(kSector);
  std::span<std::byte, kSector> sector(buf.data(), kSector);
  for (std::size_t i = 0; i < kSectorPayload; ++i) sector[i] = static_cast<std::byte>(i * 7);
  SealSector(sector, FileKind::kGraphNodes, 5);
  EXPECT_TRUE(VerifySector(sector, FileKind::kGraphNodes, 5, "f").ok());
  EXPECT_TRUE(VerifySector(sector, FileKind::kGraphNodes, 6, "f").IsCorruption());
  EXPECT_TRUE(VerifySector(sector, FileKind::kIvfRecords, 5, "f").IsCorruption());
  sector[4000] ^= std::byte{0x10};
  Status s = VerifySector(sector, FileKind::kGraphNodes, 5, "idx/graph.nodes");
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_NE(s.message().find("sector 5"), std::string::npos);
}

TEST(SectorFile, WriterSealsInOrderAndChecksTheCount) {
  testutil::ScratchDir dir;
  FileHeader header;
  header.kind = FileKind::kVectors;
  header.version = 3;
  header.num_sectors = 3;
  const std::byte fields[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  auto w = SectorFileWriter::Create(dir.File("ok"), header, fields);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (int s = 1; s <= 2; ++s) {
    w->sector()[0] = static_cast<std::byte>(s);
    ASSERT_TRUE(w->AppendSector().ok());
    EXPECT_EQ(w->sector()[0], std::byte{0}) << "the next sector starts zeroed";
  }
  auto size = w->Commit();
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  EXPECT_EQ(*size, 3 * kSector);
  DirectFile file;
  FileHeader read;
  std::string got;
  ASSERT_TRUE(OpenFixedSectorFile(dir.File("ok"), FileKind::kVectors, 3, 4, &file, &read, &got).ok());
  EXPECT_EQ(read.num_sectors, 3u);
  EXPECT_EQ(got, std::string("\x01\x02\x03\x04"));
  AlignedBuffer buffer(kSector);
  auto sector = std::span<std::byte, kSector>(buffer.data(), kSector);
  for (std::uint64_t s = 1; s <= 2; ++s) {
    ASSERT_TRUE(file.ReadAt(s * kSector, sector).ok());
    EXPECT_TRUE(VerifySector(sector, FileKind::kVectors, s, "ok").ok());
    EXPECT_EQ(sector[0], static_cast<std::byte>(s));
  }
  EXPECT_TRUE(OpenFixedSectorFile(dir.File("ok"), FileKind::kVectors, 3, 8, &file, &read, &got)
                  .IsCorruption());
  EXPECT_FALSE(
      OpenFixedSectorFile(dir.File("ok"), FileKind::kEdgePages, 3, 4, &file, &read, &got).ok());
  // One sector short of the header: refused, and no file is left.
  auto short_w = SectorFileWriter::Create(dir.File("short"), header, fields);
  ASSERT_TRUE(short_w.ok());
  ASSERT_TRUE(short_w->AppendSector().ok());
  EXPECT_TRUE(short_w->Commit().status().IsInvalidArgument());
  EXPECT_FALSE(std::filesystem::exists(dir.File("short")));
}

TEST(BlobFile, RoundTripAndCorruption) {
  testutil::ScratchDir dir;
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.File("pq.bin");
  std::vector<std::uint8_t> a(1000), b(33);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(255 - i);
  auto size = WriteBlobFile(path, BlobKind::kPqCodes, 1, {a, b});
  ASSERT_TRUE(size.ok()) << size.status().ToString();
  auto got = ReadBlobFile(path, BlobKind::kPqCodes, 1, 2);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->sections[0], a);
  EXPECT_EQ(got->sections[1], b);
  EXPECT_TRUE(ReadBlobFile(path, BlobKind::kPqCodes, 1, 3).status().IsCorruption());
  EXPECT_TRUE(ReadBlobFile(path, BlobKind::kNodeCache, 1, 2).status().IsCorruption());
  // Flip one payload byte.
  FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, static_cast<long>(*size) - 5, SEEK_SET);
  std::fputc(0x42, f);
  std::fclose(f);
  auto bad = ReadBlobFile(path, BlobKind::kPqCodes, 1, 2);
  EXPECT_TRUE(bad.status().IsCorruption());
  EXPECT_NE(bad.status().message().find("checksum"), std::string::npos);
  // Truncate.
  ASSERT_EQ(truncate(path.c_str(), 50), 0);
  EXPECT_TRUE(ReadBlobFile(path, BlobKind::kPqCodes, 1, 2).status().IsCorruption());
  EXPECT_TRUE(ReadBlobFile(path + ".nope", BlobKind::kPqCodes, 1, 2).status().IsNotFound());
}

}  // namespace
}  // namespace strata::format
