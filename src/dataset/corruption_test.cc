// Bad input: every corruption case yields the right Status code and a message
// naming the file and the problem; nothing crashes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <string>
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

void ExpectError(const Status& s, StatusCode code, const std::string& path,
                 const std::string& needle) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(needle), std::string::npos) << s.ToString();
}

TEST(DatasetCorruption, MissingFileAndDirectory) {
  ScopedTempDir dir;
  const std::string path = dir.File("missing.fbin");
  ExpectError(DatasetReader::Open(path).status(), StatusCode::kNotFound, path, "no such file");
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kNotFound, path, "no such file");
  DatasetReadOptions o;
  o.format = DatasetFormat::kFbin;
  ExpectError(DatasetReader::Open(dir.path(), o).status(), StatusCode::kInvalidArgument, dir.path(),
              "not a regular file");
}

TEST(DatasetCorruption, BinHeaderAndSize) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  const std::string data(4 * 3 * 4, '\0');
  WriteFileBytes(path, "\x01\x02\x03");
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "too short");
  WriteFileBytes(path, U32Bytes(4) + U32Bytes(3) + data.substr(1));
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "truncated");
  WriteFileBytes(path, U32Bytes(4) + U32Bytes(3) + data + "x");
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path,
              "does not match the header");
  WriteFileBytes(path, U32Bytes(4) + U32Bytes(0) + data);
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "dimension is 0");
  WriteFileBytes(path, U32Bytes(1) + U32Bytes(70000) + data);
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path,
              "dimension 70000 exceeds");
  // The largest header values: no overflow, just a size mismatch.
  WriteFileBytes(path, U32Bytes(0xffffffffu) + U32Bytes(65536) + data);
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "truncated");
  // A u8bin read as .fbin (format override) fails on size, not later.
  WriteFileBytes(path, U32Bytes(4) + U32Bytes(3) + std::string(12, '\x01'));
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "float32");
}

TEST(DatasetCorruption, TexmexRows) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fvecs");
  auto row = [](std::int32_t d, int values) {
    std::string s = I32Bytes(d);
    for (int i = 0; i < values; ++i) s += F32Bytes(static_cast<float>(i));
    return s;
  };
  WriteFileBytes(path, "");
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "empty");
  WriteFileBytes(path, "\x03\x00");
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "truncated");
  WriteFileBytes(path, row(0, 0));
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "is 0");
  WriteFileBytes(path, row(-5, 3));
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "negative");
  WriteFileBytes(path, row(100000, 0));
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "exceeds");
  WriteFileBytes(path, row(3, 3) + row(3, 3) + row(3, 2));
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path, "not a multiple");
  // Same total size but the last row declares another dimension.
  WriteFileBytes(path, row(3, 3) + row(3, 3) + row(2, 3));
  ExpectError(GetDatasetInfo(path).status(), StatusCode::kCorruption, path,
              "row 2 has dimension 2 but row 0 has 3");
  // A middle row that disagrees is found when read.
  WriteFileBytes(path, row(3, 3) + row(4, 3) + row(3, 3));
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::vector<float> buf(9);
  EXPECT_TRUE((*r)->ReadRows(0, 1, std::span<float>(buf)).ok());
  EXPECT_TRUE((*r)->ReadRows(2, 1, std::span<float>(buf)).ok());
  ExpectError((*r)->ReadRows(0, 3, std::span<float>(buf)), StatusCode::kCorruption, path,
              "row 1 has dimension 4");
  ExpectError((*r)->ReadRowsAsFloat(1, 1, std::span<float>(buf)), StatusCode::kCorruption, path,
              "row 1 has dimension 4");
}

TEST(DatasetCorruption, NanAndInfReportTheRow) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  const std::uint32_t n = 20, d = 4;
  std::vector<float> v(n * d, 1.0f);
  v[7 * d + 2] = std::numeric_limits<float>::quiet_NaN();
  v[15 * d + 0] = -std::numeric_limits<float>::infinity();
  WriteFileBytes(path, U32Bytes(n) + U32Bytes(d) + RawBytes(v));
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok());
  std::vector<float> buf(n * d);
  ExpectError((*r)->ReadRows(0, n, std::span<float>(buf)), StatusCode::kInvalidArgument, path,
              "row 7 column 2 is NaN");
  ExpectError((*r)->ReadRowsAsFloat(5, 5, std::span<float>(buf)), StatusCode::kInvalidArgument,
              path, "row 7 column 2 is NaN");
  ExpectError((*r)->ReadRows(8, 12, std::span<float>(buf)), StatusCode::kInvalidArgument, path,
              "row 15 column 0 is Inf");
  ExpectError((*r)->ReadAll().status(), StatusCode::kInvalidArgument, path, "row 7");
  EXPECT_TRUE((*r)->ReadRows(8, 7, std::span<float>(buf)).ok());  // rows 8..14 are clean
  DatasetReadOptions lax;
  lax.check_finite = false;
  auto r2 = DatasetReader::Open(path, lax);
  ASSERT_TRUE(r2.ok());
  ASSERT_TRUE((*r2)->ReadRows(0, n, std::span<float>(buf)).ok());
  EXPECT_TRUE(std::isnan(buf[7 * d + 2]));

  // float16 NaN (0x7e00) and Inf (0xfc00) in an .npy.
  const std::string npy = dir.File("h.npy");
  auto w = DatasetWriter::Create(npy, ElementType::kFloat16, 2);
  const std::vector<std::uint16_t> h = {0x3c00, 0x3c00, 0x3c00, 0xfc00, 0x7e00, 0x0000};
  ASSERT_TRUE((*w)->Append(std::span<const std::uint16_t>(h)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  auto rh = DatasetReader::Open(npy);
  ASSERT_TRUE(rh.ok());
  std::vector<std::uint16_t> raw(6);
  ExpectError((*rh)->ReadRows(0, 3, std::span<std::uint16_t>(raw)), StatusCode::kInvalidArgument,
              npy, "row 1 column 1 is Inf");
  ExpectError((*rh)->ReadRowsAsFloat(2, 1, std::span<float>(buf)), StatusCode::kInvalidArgument,
              npy, "row 2 column 0 is NaN");
}

TEST(DatasetCorruption, FileShrinkingWhileOpen) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  std::vector<float> v(100 * 8, 2.0f);
  WriteFileBytes(path, U32Bytes(100) + U32Bytes(8) + RawBytes(v));
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(::truncate(path.c_str(), 8 + 50 * 32), 0);
  std::vector<float> buf(100 * 8);
  EXPECT_TRUE((*r)->ReadRows(0, 50, std::span<float>(buf)).ok());
  ExpectError((*r)->ReadRows(40, 20, std::span<float>(buf)), StatusCode::kCorruption, path,
              "unexpected end of file");
}

TEST(DatasetCorruption, GarbageNeverCrashes) {
  // Random bytes under every extension: each open either fails with a status
  // or yields a reader whose reads succeed or fail cleanly.
  ScopedTempDir dir;
  std::uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::uint32_t>(state >> 33);
  };
  const char* exts[] = {"fbin", "u8bin", "i8bin", "ibin", "fvecs", "bvecs", "ivecs", "npy"};
  int opened = 0;
  for (int trial = 0; trial < 240; ++trial) {
    std::string bytes;
    const std::size_t len = next() % 200;
    for (std::size_t i = 0; i < len; ++i) bytes.push_back(static_cast<char>(next()));
    std::string ext = exts[trial % 8];
    if (trial % 4 == 0) {
      // A consistent header with random payload (random floats include NaN
      // and Inf patterns), so some files get past the size checks.
      const std::uint32_t rows = next() % 5, dim = 1 + next() % 6;
      bytes = U32Bytes(rows) + U32Bytes(dim) +
              bytes.substr(0, std::min<std::size_t>(len, rows * dim * 4));
      ext = "fbin";
    }
    const std::string path = dir.File("g." + ext);
    WriteFileBytes(path, bytes);
    auto info = GetDatasetInfo(path);
    if (!info.ok()) {
      EXPECT_NE(info.status().message().find(path), std::string::npos) << info.status().ToString();
      continue;
    }
    ++opened;
    if (info->ground_truth) {
      (void)ReadGroundTruth(path).ok();
    } else {
      auto r = DatasetReader::Open(path);
      ASSERT_TRUE(r.ok());
      std::vector<float> buf(static_cast<std::size_t>(info->rows) * info->dim + 1);
      (void)(*r)->ReadRowsAsFloat(0, info->rows, std::span<float>(buf)).ok();
      (void)(*r)->Summarize().ok();
    }
  }
  EXPECT_GT(opened, 0);
}

}  // namespace
}  // namespace strata
