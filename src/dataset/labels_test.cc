// Label files: DiskANN text and .spmat CSR round trips, filter-track AND
// semantics, and every malformed-input case named in the error.
#include "strata/labels.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dataset/test_util.h"

namespace strata {
namespace {

using dataset_test::ScopedTempDir;
using dataset_test::WriteFileBytes;

LabelSets Sample() {
  LabelSets s;
  s.AddRow({3, 1, 3});  // sorted and deduplicated: {1, 3}
  s.AddRow({});
  s.AddRow({7});
  s.AddRow({1, 2, 3, 40});
  return s;
}

void ExpectSame(const LabelSets& a, const LabelSets& b) {
  EXPECT_EQ(a.offsets, b.offsets);
  EXPECT_EQ(a.labels, b.labels);
}

template <typename T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));
  out->append(b, sizeof(T));
}

TEST(Labels, AddRowSortsAndDeduplicates) {
  const LabelSets s = Sample();
  ASSERT_EQ(s.rows(), 4u);
  EXPECT_EQ(std::vector<std::uint32_t>(s.row(0).begin(), s.row(0).end()),
            (std::vector<std::uint32_t>{1, 3}));
  EXPECT_TRUE(s.row(1).empty());
}

TEST(Labels, HasAllIsAnd) {
  const LabelSets s = Sample();
  const std::vector<std::uint32_t> one = {3}, two = {1, 3}, other = {2, 7}, none = {};
  EXPECT_TRUE(s.HasAll(0, one));
  EXPECT_TRUE(s.HasAll(0, two));
  EXPECT_TRUE(s.HasAll(3, two));
  EXPECT_FALSE(s.HasAll(2, two));
  EXPECT_FALSE(s.HasAll(3, other));
  EXPECT_FALSE(s.HasAll(1, one));
  EXPECT_TRUE(s.HasAll(1, none));  // no required label: everything passes
  EXPECT_EQ(s.CountWith(3), 2u);
  EXPECT_EQ(s.CountWith(5), 0u);
}

TEST(Labels, TextRoundTrip) {
  ScopedTempDir dir;
  const std::string path = dir.path() + "/labels.txt";
  ASSERT_TRUE(WriteLabels(path, Sample()).ok());
  auto back = ReadLabels(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(*back, Sample());
}

TEST(Labels, TextAcceptsSpacesAndCrlf) {
  ScopedTempDir dir;
  const std::string path = dir.path() + "/l.txt";
  WriteFileBytes(path, " 5 , 2\r\n\r\n9\n");
  auto s = ReadLabelText(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->rows(), 3u);
  EXPECT_EQ(std::vector<std::uint32_t>(s->row(0).begin(), s->row(0).end()),
            (std::vector<std::uint32_t>{2, 5}));
  EXPECT_TRUE(s->row(1).empty());
  EXPECT_EQ(s->row(2)[0], 9u);
}

TEST(Labels, TextRejectsBadLabelsNamingTheLine) {
  ScopedTempDir dir;
  for (const std::string bad : {"1\nred\n", "1\n-3\n", "1\n4294967295\n", "1\n2,,3\n", "1\n2.5\n"}) {
    const std::string path = dir.path() + "/bad.txt";
    WriteFileBytes(path, bad);
    auto s = ReadLabelText(path);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_TRUE(s.status().IsInvalidArgument()) << s.status().ToString();
    EXPECT_NE(s.status().message().find("line 2"), std::string::npos) << s.status().ToString();
  }
}

TEST(Labels, SpmatRoundTrip) {
  ScopedTempDir dir;
  const std::string path = dir.path() + "/labels.spmat";
  ASSERT_TRUE(WriteLabels(path, Sample()).ok());
  auto back = ReadLabels(path);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSame(*back, Sample());
}

// The layout big-ann-benchmarks writes (scipy csr_matrix: int64 header and
// indptr, int32 indices, float32 data), built by hand.
TEST(Labels, SpmatReadsTheHarnessLayout) {
  ScopedTempDir dir;
  std::string f;
  Put<std::int64_t>(&f, 2);
  Put<std::int64_t>(&f, 10);
  Put<std::int64_t>(&f, 3);
  for (std::int64_t v : {0, 2, 3}) Put<std::int64_t>(&f, v);
  for (std::int32_t v : {9, 4, 0}) Put<std::int32_t>(&f, v);
  for (int i = 0; i < 3; ++i) Put<float>(&f, 1.0f);
  const std::string path = dir.path() + "/h.spmat";
  WriteFileBytes(path, f);
  auto s = ReadSpmat(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->rows(), 2u);
  EXPECT_EQ(std::vector<std::uint32_t>(s->row(0).begin(), s->row(0).end()),
            (std::vector<std::uint32_t>{4, 9}));
  EXPECT_EQ(s->row(1)[0], 0u);
}

TEST(Labels, SpmatRejectsCorruptFiles) {
  ScopedTempDir dir;
  const std::string good_path = dir.path() + "/g.spmat";
  ASSERT_TRUE(WriteLabels(good_path, Sample()).ok());
  std::string good;
  FILE* fp = std::fopen(good_path.c_str(), "rb");
  ASSERT_NE(fp, nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), fp)) > 0) good.append(buf, n);
  std::fclose(fp);

  const std::string path = dir.path() + "/bad.spmat";
  // Truncated anywhere.
  for (std::size_t cut : {std::size_t{0}, std::size_t{10}, std::size_t{24}, good.size() - 1}) {
    WriteFileBytes(path, good.substr(0, cut));
    EXPECT_FALSE(ReadSpmat(path).ok()) << "cut at " << cut;
  }
  // A column past ncol.
  std::string bad = good;
  const std::size_t indices_at = 24 + 8 * (Sample().rows() + 1);
  const std::int32_t big = 1000;
  std::memcpy(bad.data() + indices_at, &big, 4);
  WriteFileBytes(path, bad);
  auto s = ReadSpmat(path);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("outside"), std::string::npos) << s.status().ToString();
  // Decreasing indptr: {0, 2, 2, 3, 7} made {0, 2, 3, 1, 7}.
  bad = good;
  const std::int64_t three = 3, one = 1;
  std::memcpy(bad.data() + 24 + 8 * 2, &three, 8);
  std::memcpy(bad.data() + 24 + 8 * 3, &one, 8);
  WriteFileBytes(path, bad);
  EXPECT_FALSE(ReadSpmat(path).ok());
  // Missing file.
  EXPECT_TRUE(ReadLabels(dir.path() + "/none.spmat").status().IsNotFound());
}

}  // namespace
}  // namespace strata
