// DatasetReader::Summarize against hand-computed statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "dataset/test_util.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using dataset_test::RawBytes;
using dataset_test::ScopedTempDir;
using dataset_test::U32Bytes;
using dataset_test::WriteFileBytes;

TEST(DatasetSummary, ExactOnSmallFile) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.fbin");
  const std::vector<float> v = {
      3.0f,
      4.0f,  // norm 5
      0.0f,
      0.0f,  // zero row
      0.6f,
      -0.8f,  // unit norm
      std::numeric_limits<float>::quiet_NaN(),
      1.0f,  // non-finite row
      -2.0f,
      std::numeric_limits<float>::infinity(),  // non-finite row
  };
  WriteFileBytes(path, U32Bytes(5) + U32Bytes(2) + RawBytes(v));
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok());
  auto s = (*r)->Summarize();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->rows_sampled, 5u);
  EXPECT_TRUE(s->sampled_all);
  EXPECT_EQ(s->values, 8u);
  EXPECT_DOUBLE_EQ(s->min, -2.0);
  EXPECT_DOUBLE_EQ(s->max, 4.0);
  const double sum = 3 + 4 + 0 + 0 + static_cast<double>(0.6f) + static_cast<double>(-0.8f) + 1 - 2;
  EXPECT_DOUBLE_EQ(s->mean, sum / 8);
  EXPECT_NEAR(s->mean_norm, (5.0 + 0.0 + 1.0) / 3, 1e-7);
  EXPECT_DOUBLE_EQ(s->min_norm, 0.0);
  EXPECT_DOUBLE_EQ(s->max_norm, 5.0);
  EXPECT_EQ(s->zero_rows, 1u);
  EXPECT_EQ(s->unit_norm_rows, 1u);
  EXPECT_EQ(s->nan_count, 1u);
  EXPECT_EQ(s->inf_count, 1u);
  EXPECT_EQ(s->non_finite_rows, 2u);
  EXPECT_EQ(s->first_non_finite_row, 3);
  const std::string text = s->ToString();
  EXPECT_NE(text.find("NaN values: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("first at row 3"), std::string::npos) << text;
}

TEST(DatasetSummary, SamplesLargeFilesIncludingBothEnds) {
  ScopedTempDir dir;
  const std::string path = dir.File("a.u8bin");
  const std::uint32_t n = 100000, d = 2;
  std::vector<std::uint8_t> v(static_cast<std::size_t>(n) * d, 3);
  v[0] = v[1] = 0;       // first row is zero
  v[2 * (n - 1)] = 255;  // last row holds the maximum
  WriteFileBytes(path, U32Bytes(n) + U32Bytes(d) + RawBytes(v));
  auto r = DatasetReader::Open(path);
  ASSERT_TRUE(r.ok());
  SummaryOptions opts;
  opts.max_rows = 1600;
  auto s = (*r)->Summarize(opts);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->rows_sampled, 1600u);
  EXPECT_FALSE(s->sampled_all);
  EXPECT_EQ(s->zero_rows, 1u);
  EXPECT_DOUBLE_EQ(s->min, 0.0);
  EXPECT_DOUBLE_EQ(s->max, 255.0);
  EXPECT_EQ(s->nan_count, 0u);
  EXPECT_EQ(s->first_non_finite_row, -1);
  opts.max_rows = 0;
  EXPECT_TRUE((*r)->Summarize(opts).status().IsInvalidArgument());
}

}  // namespace
}  // namespace strata
