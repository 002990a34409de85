// ivf.ram round trips: version 2 with and without listed codes, version 1
// files (written before listed codes existed) still read, and a section count
// that does not match the version is corruption.
#include "format/ivf_ram_file.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "scratch_dir.h"

namespace strata::format {
namespace {

IvfRamParts SomeParts(bool listed) {
  IvfRamParts p;
  p.quantizer = {1, 2, 3};
  p.coarse = {4, 5};
  p.centroids = {0.5f, -1.0f, 2.0f, 3.0f};
  p.cluster_sizes = {1, 2};
  p.ids = {2, 0, 1};
  p.ram_blocks.assign(96, 7);
  if (listed) p.listed_codes.assign(3 * 36, 9);
  return p;
}

void ExpectEqual(const IvfRamParts& a, const IvfRamParts& b) {
  EXPECT_EQ(a.quantizer, b.quantizer);
  EXPECT_EQ(a.coarse, b.coarse);
  EXPECT_EQ(a.centroids, b.centroids);
  EXPECT_EQ(a.cluster_sizes, b.cluster_sizes);
  EXPECT_EQ(a.ids, b.ids);
  EXPECT_EQ(a.ram_blocks, b.ram_blocks);
  EXPECT_EQ(a.listed_codes, b.listed_codes);
}

template <typename T>
std::span<const std::uint8_t> Bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const std::uint8_t*>(v.data()), v.size() * sizeof(T)};
}

TEST(IvfRamFile, RoundTripsWithAndWithoutListedCodes) {
  testutil::ScratchDir dir;
  for (bool listed : {false, true}) {
    const IvfRamParts parts = SomeParts(listed);
    ASSERT_TRUE(WriteIvfRamFile(dir.File("ivf.ram"), parts).ok());
    auto read = ReadIvfRamFile(dir.File("ivf.ram"));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ExpectEqual(*read, parts);
  }
}

TEST(IvfRamFile, VersionOneIsReadWithoutListedCodes) {
  testutil::ScratchDir dir;
  const IvfRamParts parts = SomeParts(false);
  ASSERT_TRUE(WriteBlobFile(dir.File("v1"), kIvfRamBlobKind, 1,
                            {Bytes(parts.quantizer), Bytes(parts.coarse), Bytes(parts.centroids),
                             Bytes(parts.cluster_sizes), Bytes(parts.ids), Bytes(parts.ram_blocks)})
                  .ok());
  auto read = ReadIvfRamFile(dir.File("v1"));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ExpectEqual(*read, parts);

  // Seven sections under version 1, or six under version 2: corruption.
  const std::vector<std::uint8_t> extra = {1};
  ASSERT_TRUE(WriteBlobFile(dir.File("bad1"), kIvfRamBlobKind, 1,
                            {Bytes(parts.quantizer), Bytes(parts.coarse), Bytes(parts.centroids),
                             Bytes(parts.cluster_sizes), Bytes(parts.ids), Bytes(parts.ram_blocks),
                             Bytes(extra)})
                  .ok());
  EXPECT_TRUE(ReadIvfRamFile(dir.File("bad1")).status().IsCorruption());
  ASSERT_TRUE(WriteBlobFile(dir.File("bad2"), kIvfRamBlobKind, 2,
                            {Bytes(parts.quantizer), Bytes(parts.coarse), Bytes(parts.centroids),
                             Bytes(parts.cluster_sizes), Bytes(parts.ids), Bytes(parts.ram_blocks)})
                  .ok());
  EXPECT_TRUE(ReadIvfRamFile(dir.File("bad2")).status().IsCorruption());
  // A version from the future is refused.
  ASSERT_TRUE(WriteBlobFile(dir.File("v3"), kIvfRamBlobKind, 3, {Bytes(parts.quantizer)}).ok());
  EXPECT_FALSE(ReadIvfRamFile(dir.File("v3")).ok());
}

}  // namespace
}  // namespace strata::format
