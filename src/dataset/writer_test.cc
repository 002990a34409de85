// Writers: exact byte layouts, round trips through the readers for every
// format and element type, and the temporary-file protocol.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cmath>
#include <csignal>
#include <cstring>
#include <string>
#include <vector>

#include "dataset/test_util.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using dataset_test::F32Bytes;
using dataset_test::FileExists;
using dataset_test::I32Bytes;
using dataset_test::RawBytes;
using dataset_test::ReadFileBytes;
using dataset_test::ScopedTempDir;
using dataset_test::U32Bytes;

DatasetWriteOptions NoSync() {
  DatasetWriteOptions o;
  o.sync = false;
  return o;
}

template <typename T>
std::vector<T> Pattern(std::size_t n, int salt) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, float>) {
      v[i] = static_cast<float>(static_cast<int>(i * 7 + salt) % 101) * 0.25f - 12.5f;
    } else if constexpr (std::is_same_v<T, std::uint16_t>) {
      // Finite float16 patterns: keep the exponent below all-ones.
      v[i] = static_cast<std::uint16_t>((i * 2654435761u + salt) % 0x7800u);
    } else {
      v[i] = static_cast<T>(static_cast<int>(i * 37 + salt));
    }
  }
  return v;
}

TEST(DatasetWriter, FbinLayoutIsExact) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  const std::vector<float> rows = {1.0f, -2.0f, 3.5f, 0.0f, 5.0f, 6.25f};
  ASSERT_TRUE(WriteDataset(
                  path,
                  [&] {
                    auto m = VectorMatrix::Allocate(ElementType::kFloat32, 2, 3).value();
                    std::memcpy(m.bytes(), rows.data(), 24);
                    return m;
                  }(),
                  NoSync())
                  .ok());
  std::string expected = U32Bytes(2) + U32Bytes(3);
  for (float f : rows) expected += F32Bytes(f);
  EXPECT_EQ(ReadFileBytes(path), expected);
  EXPECT_EQ(dir.List(), std::vector<std::string>{"a.fbin"});  // no temporary left
}

TEST(DatasetWriter, BvecsLayoutIsExact) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.bvecs");
  auto w = DatasetWriter::Create(path, ElementType::kUint8, 2, NoSync());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::vector<std::uint8_t> rows = {1, 2, 3, 255};
  ASSERT_TRUE((*w)->Append(std::span<const std::uint8_t>(rows)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(ReadFileBytes(path), I32Bytes(2) + "\x01\x02" + I32Bytes(2) + "\x03\xff");
}

// The bytes np.save writes for np.arange(6, dtype='<f4').reshape(2, 3) * 0.5
// (numpy 1.24): our .npy output is byte-identical for 2-D arrays.
TEST(DatasetWriter, NpyMatchesNumpyGolden) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.npy");
  auto w = DatasetWriter::Create(path, ElementType::kFloat32, 3, NoSync());
  ASSERT_TRUE(w.ok());
  const std::vector<float> rows = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 2.5f};
  ASSERT_TRUE((*w)->Append(std::span<const float>(rows)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  dict.resize(117, ' ');
  std::string expected = std::string("\x93NUMPY\x01\x00", 8) + "v" + std::string(1, '\0') + dict +
                         "\n" + RawBytes(rows);
  EXPECT_EQ(ReadFileBytes(path), expected);
}

// Writes `rows` (n x dim of T) in three uneven Append calls, then checks the
// reader returns the same rows and the header facts.
template <typename T>
void RoundTrip(const std::string& name, ElementType type, std::uint32_t dim, std::size_t n) {
  SCOPED_TRACE(name);
  ScopedTempDir dir;
  const std::string path = dir.File(name);
  const std::vector<T> rows = Pattern<T>(n * dim, 3);
  auto w = DatasetWriter::Create(path, type, dim, NoSync());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::span<const T> all(rows);
  const std::size_t cut1 = (n / 3) * dim, cut2 = (n / 2) * dim;
  ASSERT_TRUE((*w)->Append(all.subspan(0, cut1)).ok());
  ASSERT_TRUE((*w)->Append(all.subspan(cut1, cut2 - cut1)).ok());
  ASSERT_TRUE((*w)->Append(all.subspan(cut2)).ok());
  EXPECT_EQ((*w)->rows_written(), n);
  EXPECT_FALSE(FileExists(path));  // nothing at the final name before Finish
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(dir.List(), std::vector<std::string>{name});

  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)->rows(), n);
  EXPECT_EQ((*r)->dim(), dim);
  EXPECT_EQ((*r)->element_type(), type);
  EXPECT_EQ((*r)->info().file_bytes, ReadFileBytes(path).size());
  auto all_read = (*r)->ReadAll();
  ASSERT_TRUE(all_read.ok()) << all_read.status().ToString();
  const auto got = all_read->template values<T>();
  ASSERT_EQ(got.size(), rows.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), rows.begin()));
}

TEST(DatasetWriter, RoundTripEveryFormatAndType) {
  RoundTrip<float>("a.fbin", ElementType::kFloat32, 7, 50);
  RoundTrip<std::uint8_t>("a.u8bin", ElementType::kUint8, 16, 40);
  RoundTrip<std::int8_t>("a.i8bin", ElementType::kInt8, 5, 33);
  RoundTrip<float>("a.fvecs", ElementType::kFloat32, 3, 41);
  RoundTrip<std::uint8_t>("a.bvecs", ElementType::kUint8, 128, 20);
  RoundTrip<float>("a.npy", ElementType::kFloat32, 9, 30);
  RoundTrip<std::uint16_t>("a.npy", ElementType::kFloat16, 4, 30);
  RoundTrip<std::uint8_t>("a.npy", ElementType::kUint8, 12, 30);
  RoundTrip<std::int8_t>("a.npy", ElementType::kInt8, 1, 30);
}

TEST(DatasetWriter, ZeroRowsIsAValidFile) {
  ScopedTempDir dir;
  for (const std::string name : {"z.fbin", "z.npy"}) {
    const std::string path = dir.File(name);
    auto w = DatasetWriter::Create(path, ElementType::kFloat32, 8, NoSync());
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Finish().ok());
    auto info = GetDatasetInfo(path);
    ASSERT_TRUE(info.ok()) << info.status().ToString();
    EXPECT_EQ(info->rows, 0u);
    EXPECT_EQ(info->dim, 8u);
    auto all = ReadVectorsAsFloat(path);
    ASSERT_TRUE(all.ok());
    EXPECT_EQ(all->rows(), 0u);
  }
}

TEST(DatasetWriter, TemporaryRemovedWhenFinishIsNeverCalled) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  {
    auto w = DatasetWriter::Create(path, ElementType::kFloat32, 2, NoSync());
    ASSERT_TRUE(w.ok());
    const std::vector<float> rows(2000, 1.0f);
    ASSERT_TRUE((*w)->Append(std::span<const float>(rows)).ok());
    EXPECT_TRUE(FileExists((*w)->temp_path()));
    EXPECT_NE((*w)->temp_path().find("a.fbin.tmp-"), std::string::npos);
  }
  EXPECT_TRUE(dir.List().empty());
}

TEST(DatasetWriter, ConversionErrorRejectsTheBatchOnly) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.u8bin");
  dataset_test::WriteFileBytes(path, "old contents");
  auto w = DatasetWriter::Create(path, ElementType::kUint8, 2, NoSync());
  ASSERT_TRUE(w.ok());
  const std::vector<float> good = {1, 2, 3, 4};
  ASSERT_TRUE((*w)->AppendFloat(good).ok());
  const std::string temp = (*w)->temp_path();
  EXPECT_TRUE(FileExists(temp));
  const std::vector<float> bad = {5, 6, 7, 300};  // 300 does not fit uint8
  Status s = (*w)->AppendFloat(bad);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("row 3 column 1"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos);
  // Conversion errors are caught before anything is written, so the writer
  // remains usable; an I/O-level failure (below) is sticky.
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ((*w)->rows_written(), 2u);
  EXPECT_FALSE(FileExists(temp));
  EXPECT_EQ(ReadFileBytes(path).size(), 8u + 4u);
}

TEST(DatasetWriter, ErrorIsStickyAndRemovesTemporary) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  dataset_test::WriteFileBytes(path, "old contents");
  auto w = DatasetWriter::Create(path, ElementType::kFloat32, 1, NoSync());
  ASSERT_TRUE(w.ok());
  // An absurd row count fails inside the writer (not a plain argument check)
  // and poisons it.
  Status s = (*w)->AppendRaw(nullptr, std::uint64_t{1} << 62);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_EQ(dir.List(), std::vector<std::string>{"a.fbin"});
  const std::vector<float> row = {1.0f};
  EXPECT_EQ((*w)->Append(std::span<const float>(row)).code(), s.code());
  EXPECT_EQ((*w)->Finish().code(), s.code());
  EXPECT_EQ(ReadFileBytes(path), "old contents");
}

// A real write failure (EFBIG from a file-size limit, as on a full disk):
// the error names the file, the temporary is removed, the old file survives.
TEST(DatasetWriter, WriteFailureRemovesTemporary) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  dataset_test::WriteFileBytes(path, "old contents");
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 256 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Status s;
  {
    auto w = DatasetWriter::Create(path, ElementType::kFloat32, 64, NoSync());
    ASSERT_TRUE(w.ok());
    const std::vector<float> rows(64 * 4096, 1.0f);  // 1 MiB, above the limit
    s = (*w)->Append(std::span<const float>(rows));
    if (s.ok()) s = (*w)->Finish();
    EXPECT_EQ(dir.List(), std::vector<std::string>{"a.fbin"});
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("a.fbin"), std::string::npos) << s.ToString();
  EXPECT_EQ(ReadFileBytes(path), "old contents");
}

TEST(DatasetWriter, ReplacesExistingFileOnlyAtFinish) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fvecs");
  dataset_test::WriteFileBytes(path, "previous");
  auto w = DatasetWriter::Create(path, ElementType::kFloat32, 2);  // with fsync
  ASSERT_TRUE(w.ok());
  const std::vector<float> rows = {1, 2, 3, 4};
  ASSERT_TRUE((*w)->Append(std::span<const float>(rows)).ok());
  EXPECT_EQ(ReadFileBytes(path), "previous");
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_TRUE((*w)->Finish().ok());  // idempotent
  EXPECT_EQ(ReadFileBytes(path).size(), 2u * (4 + 8));
  EXPECT_TRUE((*w)->Append(std::span<const float>(rows)).IsInvalidArgument());
}

TEST(DatasetWriter, RejectsBadArguments) {
  ScopedTempDir dir;
  EXPECT_TRUE(DatasetWriter::Create(dir.File("a.fbin"), ElementType::kUint8, 4)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(DatasetWriter::Create(dir.File("a.bvecs"), ElementType::kInt8, 4)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(DatasetWriter::Create(dir.File("a.npy"), ElementType::kBFloat16, 4)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(DatasetWriter::Create(dir.File("a.ibin"), ElementType::kFloat32, 4)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(DatasetWriter::Create(dir.File("a.fbin"), ElementType::kFloat32, 0)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(DatasetWriter::Create(dir.File("a.fbin"), ElementType::kFloat32, 70000)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(DatasetWriter::Create(dir.File("a.txt"), ElementType::kFloat32, 4)
                  .status()
                  .IsInvalidArgument());
  Status missing_dir =
      DatasetWriter::Create(dir.File("nope/a.fbin"), ElementType::kFloat32, 4).status();
  EXPECT_TRUE(missing_dir.IsIOError()) << missing_dir.ToString();
  EXPECT_NE(missing_dir.message().find("nope/a.fbin"), std::string::npos);

  auto w = DatasetWriter::Create(dir.File("a.fbin"), ElementType::kFloat32, 4, NoSync());
  ASSERT_TRUE(w.ok());
  const std::vector<float> five(5, 1.0f);
  EXPECT_TRUE((*w)->Append(std::span<const float>(five)).IsInvalidArgument());
  const std::vector<std::uint8_t> bytes(4, 1);
  EXPECT_TRUE((*w)->Append(std::span<const std::uint8_t>(bytes)).IsInvalidArgument());
  // Argument errors do not poison the writer.
  const std::vector<float> four(4, 1.0f);
  EXPECT_TRUE((*w)->Append(std::span<const float>(four)).ok());
  EXPECT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(dir.List(), std::vector<std::string>{"a.fbin"});
}

TEST(DatasetWriter, AppendFloatConvertsToEveryType) {
  ScopedTempDir dir;
  const std::vector<float> in = {-1.4f, 0.5f, 1.5f, 2.5f, 126.6f, -127.6f};
  {
    const std::string path = dir.File("a.i8bin");
    auto w = DatasetWriter::Create(path, ElementType::kInt8, 3, NoSync());
    ASSERT_TRUE((*w)->AppendFloat(in).ok());
    ASSERT_TRUE((*w)->Finish().ok());
    auto m = (*DatasetReader::Open(path))->ReadAll();
    ASSERT_TRUE(m.ok());
    const std::vector<std::int8_t> expected = {-1, 0, 2, 2, 127, -128};  // ties to even
    const auto got = m->values<std::int8_t>();
    EXPECT_EQ(std::vector<std::int8_t>(got.begin(), got.end()), expected);
  }
  {
    const std::string path = dir.File("h.npy");
    auto w = DatasetWriter::Create(path, ElementType::kFloat16, 3, NoSync());
    ASSERT_TRUE((*w)->AppendFloat(in).ok());
    ASSERT_TRUE((*w)->Finish().ok());
    auto m = ReadVectorsAsFloat(path);
    ASSERT_TRUE(m.ok());
    const auto got = m->values<float>();
    for (std::size_t i = 0; i < in.size(); ++i) {
      EXPECT_NEAR(got[i], in[i], std::abs(in[i]) * 1e-3) << i;  // half precision
    }
    EXPECT_EQ(got[1], 0.5f);
    EXPECT_EQ(got[3], 2.5f);
  }
  {
    auto w = DatasetWriter::Create(dir.File("b.u8bin"), ElementType::kUint8, 3, NoSync());
    Status s = (*w)->AppendFloat(in);  // negative values do not fit uint8
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_NE(s.message().find("row 0 column 0"), std::string::npos) << s.ToString();
    const std::vector<float> nan = {1.0f, std::nanf(""), 2.0f};
    EXPECT_TRUE((*w)->AppendFloat(nan).IsInvalidArgument());
  }
}

TEST(DatasetWriter, LargeAppendsAndExplicitFormat) {
  ScopedTempDir dir;
  const std::string path = dir.File("data.bin");
  DatasetWriteOptions opts = NoSync();
  opts.format = DatasetFormat::kFbin;
  const std::uint32_t dim = 96;
  const std::vector<float> rows = Pattern<float>(dim * 5000, 11);  // > write buffer
  auto w = DatasetWriter::Create(path, ElementType::kFloat32, dim, opts);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append(std::span<const float>(rows).subspan(0, dim * 10)).ok());
  ASSERT_TRUE((*w)->Append(std::span<const float>(rows).subspan(dim * 10)).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_TRUE(DatasetReader::Open(path).status().IsInvalidArgument());  // unknown extension
  DatasetReadOptions ro;
  ro.format = DatasetFormat::kFbin;
  auto m = ReadVectorsAsFloat(path, ro);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto got = m->values<float>();
  EXPECT_TRUE(std::equal(got.begin(), got.end(), rows.begin(), rows.end()));
}

}  // namespace
}  // namespace strata
