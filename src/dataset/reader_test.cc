// Readers: row ranges, typed and converting reads, format detection, limits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "dataset/test_util.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using dataset_test::F32Bytes;
using dataset_test::I32Bytes;
using dataset_test::RawBytes;
using dataset_test::ScopedTempDir;
using dataset_test::U32Bytes;
using dataset_test::WriteFileBytes;

// Builds an .fbin by hand (independently of DatasetWriter): row r, column c
// holds r * 1000 + c.
std::vector<float> MakeFbin(const std::string& path, std::uint32_t n, std::uint32_t d) {
  std::vector<float> v(static_cast<std::size_t>(n) * d);
  for (std::uint32_t r = 0; r < n; ++r) {
    for (std::uint32_t c = 0; c < d; ++c) v[static_cast<std::size_t>(r) * d + c] = r * 1000.0f + c;
  }
  WriteFileBytes(path, U32Bytes(n) + U32Bytes(d) + RawBytes(v));
  return v;
}

TEST(DatasetFormat, DetectionAndNames) {
  EXPECT_EQ(*DetectDatasetFormat("/x/base.fbin"), DatasetFormat::kFbin);
  EXPECT_EQ(*DetectDatasetFormat("q.U8BIN"), DatasetFormat::kU8bin);
  EXPECT_EQ(*DetectDatasetFormat("a.b.i8bin"), DatasetFormat::kI8bin);
  EXPECT_EQ(*DetectDatasetFormat("gt.ibin"), DatasetFormat::kIbin);
  EXPECT_EQ(*DetectDatasetFormat("sift_base.fvecs"), DatasetFormat::kFvecs);
  EXPECT_EQ(*DetectDatasetFormat("b.bvecs"), DatasetFormat::kBvecs);
  EXPECT_EQ(*DetectDatasetFormat("gt.ivecs"), DatasetFormat::kIvecs);
  EXPECT_EQ(*DetectDatasetFormat("e.npy"), DatasetFormat::kNpy);
  Status s = DetectDatasetFormat("dir.fbin/noext").status();
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("dir.fbin/noext"), std::string::npos);
  EXPECT_TRUE(DetectDatasetFormat("x.hdf5").status().IsInvalidArgument());
  for (int f = 0; f < 8; ++f) {
    const auto format = static_cast<DatasetFormat>(f);
    EXPECT_EQ(*ParseDatasetFormat(DatasetFormatName(format)), format);
  }
  EXPECT_EQ(*ParseDatasetFormat(".bvecs"), DatasetFormat::kBvecs);
  EXPECT_TRUE(ParseDatasetFormat("csv").status().IsInvalidArgument());
  EXPECT_TRUE(IsGroundTruthFormat(DatasetFormat::kIvecs));
  EXPECT_FALSE(IsGroundTruthFormat(DatasetFormat::kFvecs));
}

TEST(VectorMatrix, AllocateTypedViewsAndMove) {
  auto m = VectorMatrix::Allocate(ElementType::kFloat16, 3, 5);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->row_bytes(), 10u);
  EXPECT_EQ(m->size_bytes(), 30u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m->bytes()) % 64, 0u);
  auto v = m->values<std::uint16_t>();
  ASSERT_EQ(v.size(), 15u);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](std::uint16_t x) { return x == 0; }));
  v[7] = 42;
  EXPECT_EQ(m->row<std::uint16_t>(1)[2], 42);
  VectorMatrix moved = std::move(*m);
  EXPECT_EQ(moved.rows(), 3u);
  EXPECT_EQ(moved.values<std::uint16_t>()[7], 42);
  EXPECT_EQ(m->rows(), 0u);
  EXPECT_EQ(m->size_bytes(), 0u);
  EXPECT_TRUE(VectorMatrix::Allocate(ElementType::kFloat32, 3, 0).status().IsInvalidArgument());
  EXPECT_TRUE(VectorMatrix::Allocate(ElementType::kFloat32, std::uint64_t{1} << 62, 4)
                  .status()
                  .IsInvalidArgument());
  auto empty = VectorMatrix::Allocate(ElementType::kUint8, 0, 4);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->values<std::uint8_t>().empty());
}

TEST(DatasetReader, InfoFromHeader) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  MakeFbin(path, 10, 4);
  auto info = GetDatasetInfo(path);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->format, DatasetFormat::kFbin);
  EXPECT_EQ(info->element_type, ElementType::kFloat32);
  EXPECT_EQ(info->rows, 10u);
  EXPECT_EQ(info->dim, 4u);
  EXPECT_EQ(info->file_bytes, 8u + 160u);
  EXPECT_EQ(info->data_offset, 8u);
  EXPECT_FALSE(info->ground_truth);
  EXPECT_EQ(info->ToString(), "fbin float32 rows=10 dim=4 (168 B)");
}

TEST(DatasetReader, RowRangesMatchTheFile) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  const std::uint32_t n = 37, d = 5;
  const std::vector<float> all = MakeFbin(path, n, d);
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok());
  std::vector<float> buf(n * d, -1.0f);
  for (std::uint64_t begin : {0u, 1u, 17u, 36u}) {
    for (std::uint64_t count : {0u, 1u, 5u}) {
      if (begin + count > n) continue;
      ASSERT_TRUE((*r)->ReadRows(begin, count, std::span<float>(buf)).ok());
      for (std::size_t i = 0; i < count * d; ++i) ASSERT_EQ(buf[i], all[begin * d + i]);
    }
  }
  // Past the end, or an output that is too small.
  Status past = (*r)->ReadRows(35, 3, std::span<float>(buf));
  EXPECT_TRUE(past.IsOutOfRange()) << past.ToString();
  EXPECT_NE(past.message().find(path), std::string::npos);
  EXPECT_TRUE((*r)->ReadRows(std::uint64_t{1} << 63, std::uint64_t{1} << 63, std::span<float>(buf))
                  .IsOutOfRange());
  EXPECT_TRUE((*r)->ReadRows(0, 3, std::span<float>(buf.data(), 14)).IsInvalidArgument());
}

TEST(DatasetReader, TexmexRangesAcrossScratchChunks) {
  // 1200 rows of dim 1024 (4100-byte rows) exceed one 4 MiB staging chunk.
  ScopedTempDir dir;
  const std::string path = dir.File("a.fvecs");
  const std::uint32_t n = 1200, d = 1024;
  std::string bytes;
  std::vector<float> all(static_cast<std::size_t>(n) * d);
  for (std::uint32_t r = 0; r < n; ++r) {
    bytes += I32Bytes(d);
    for (std::uint32_t c = 0; c < d; ++c) {
      all[static_cast<std::size_t>(r) * d + c] = static_cast<float>(r) - 0.5f * c;
      bytes += F32Bytes(all[static_cast<std::size_t>(r) * d + c]);
    }
  }
  WriteFileBytes(path, bytes);
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->rows(), n);
  EXPECT_EQ((*r)->info().data_offset, 0u);
  std::vector<float> buf((n - 3) * d);
  ASSERT_TRUE((*r)->ReadRows(3, n - 3, std::span<float>(buf)).ok());
  EXPECT_TRUE(std::equal(buf.begin(), buf.end(), all.begin() + 3 * d));
  ASSERT_TRUE((*r)->ReadRowsAsFloat(3, n - 3, std::span<float>(buf)).ok());
  EXPECT_TRUE(std::equal(buf.begin(), buf.end(), all.begin() + 3 * d));
}

TEST(DatasetReader, ReadRowsAsFloatConvertsIntegerAndHalfTypes) {
  ScopedTempDir dir;
  // int8 and uint8 by hand, 1100 rows of dim 4096 to cross a conversion chunk.
  const std::uint32_t n = 1100, d = 4096;
  std::vector<std::int8_t> i8(static_cast<std::size_t>(n) * d);
  std::vector<std::uint8_t> u8(i8.size());
  for (std::size_t i = 0; i < i8.size(); ++i) {
    i8[i] = static_cast<std::int8_t>(static_cast<int>(i % 256) - 128);
    u8[i] = static_cast<std::uint8_t>((i * 7) % 256);
  }
  WriteFileBytes(dir.File("a.i8bin"), U32Bytes(n) + U32Bytes(d) + RawBytes(i8));
  WriteFileBytes(dir.File("a.bvecs"), [&] {
    std::string s;
    for (std::uint32_t r = 0; r < n; ++r) {
      s += I32Bytes(d);
      s.append(reinterpret_cast<const char*>(u8.data()) + static_cast<std::size_t>(r) * d, d);
    }
    return s;
  }());
  std::vector<float> out(i8.size());
  auto ri = DatasetReader::Open(dir.File("a.i8bin"));
  ASSERT_TRUE(ri.ok());
  ASSERT_TRUE((*ri)->ReadRowsAsFloat(0, n, std::span<float>(out)).ok());
  for (std::size_t i = 0; i < i8.size(); ++i) ASSERT_EQ(out[i], static_cast<float>(i8[i])) << i;
  auto rb = DatasetReader::Open(dir.File("a.bvecs"));
  ASSERT_TRUE(rb.ok()) << rb.status().ToString();
  ASSERT_TRUE((*rb)->ReadRowsAsFloat(0, n, std::span<float>(out)).ok());
  for (std::size_t i = 0; i < u8.size(); ++i) ASSERT_EQ(out[i], static_cast<float>(u8[i])) << i;

  // float16: 1.0, -2.5, 65504 (max), smallest subnormal 2^-24.
  const std::vector<std::uint16_t> h = {0x3c00, 0xc100, 0x7bff, 0x0001};
  auto w = DatasetWriter::Create(dir.File("h.npy"), ElementType::kFloat16, 2);
  ASSERT_TRUE((*w)->Append(std::span<const std::uint16_t>(h)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  auto rh = DatasetReader::Open(dir.File("h.npy"));
  ASSERT_TRUE(rh.ok());
  std::vector<float> f(4);
  ASSERT_TRUE((*rh)->ReadRowsAsFloat(0, 2, std::span<float>(f)).ok());
  EXPECT_EQ(f, (std::vector<float>{1.0f, -2.5f, 65504.0f, 0x1p-24f}));
  std::vector<std::uint16_t> raw(4);
  ASSERT_TRUE((*rh)->ReadRows(0, 2, std::span<std::uint16_t>(raw)).ok());
  EXPECT_EQ(raw, h);
}

TEST(DatasetReader, WrongElementTypeIsRejected) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.u8bin");
  WriteFileBytes(path, U32Bytes(2) + U32Bytes(2) + "\x01\x02\x03\x04");
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok());
  std::vector<float> f(4);
  Status s = (*r)->ReadRows(0, 2, std::span<float>(f));
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_NE(s.message().find("uint8"), std::string::npos);
  std::vector<std::int8_t> i8(4);
  EXPECT_TRUE((*r)->ReadRows(0, 2, std::span<std::int8_t>(i8)).IsInvalidArgument());
  std::vector<std::uint8_t> u8(4);
  ASSERT_TRUE((*r)->ReadRows(0, 2, std::span<std::uint8_t>(u8)).ok());
  EXPECT_EQ(u8, (std::vector<std::uint8_t>{1, 2, 3, 4}));
  ASSERT_TRUE((*r)->ReadRowsAsFloat(0, 2, std::span<float>(f)).ok());
  EXPECT_EQ(f, (std::vector<float>{1, 2, 3, 4}));
}

TEST(DatasetReader, ReadAllRespectsTheLimit) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  const std::vector<float> all = MakeFbin(path, 100, 10);
  DatasetReadOptions opts;
  opts.max_read_all_bytes = 3999;
  auto r = DatasetReader::Open(path, opts);
  ASSERT_TRUE(r.ok());
  Status s = (*r)->ReadAll().status();
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("ReadRows"), std::string::npos);
  opts.max_read_all_bytes = 4000;
  auto m = ReadVectorsAsFloat(path, opts);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->rows(), 100u);
  EXPECT_EQ(m->dim(), 10u);
  const auto v = m->values<float>();
  EXPECT_TRUE(std::equal(v.begin(), v.end(), all.begin(), all.end()));
  EXPECT_EQ(m->row<float>(42)[3], 42003.0f);
}

TEST(DatasetReader, ConcurrentReadsAreSafe) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  const std::uint32_t n = 512, d = 16;
  const std::vector<float> all = MakeFbin(path, n, d);
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok());
  const DatasetReader& reader = **r;
  std::vector<int> failures(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::vector<float> buf(32 * d);
      for (std::uint64_t b = t; b + 32 <= n; b += 7) {
        if (!reader.ReadRows(b, 32, std::span<float>(buf)).ok() ||
            !std::equal(buf.begin(), buf.end(), all.begin() + b * d)) {
          ++failures[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures, std::vector<int>(4, 0));
}

TEST(DatasetReader, GroundTruthFilesAreNotVectors) {
  ScopedTempDir dir;
  const std::string path = dir.File("gt.ibin");
  WriteFileBytes(path, U32Bytes(1) + U32Bytes(1) + U32Bytes(5) + F32Bytes(0.5f));
  Status s = DatasetReader::Open(path).status();
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("ReadGroundTruth"), std::string::npos);
  auto info = GetDatasetInfo(path);
  ASSERT_TRUE(info.ok());
  EXPECT_TRUE(info->ground_truth);
  EXPECT_TRUE(info->has_distances);
  EXPECT_EQ(info->ToString(), "ibin ground truth: queries=1 k=1 (ids + distances) (16 B)");
}

}  // namespace
}  // namespace strata
