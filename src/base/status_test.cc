#include "strata/status.h"

#include <cerrno>

#include <gtest/gtest.h>

#include "strata/result.h"
#include "strata/types.h"

namespace strata {
namespace {

TEST(Status, OkByDefault) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s.message(), "");
}

TEST(Status, CarriesCodeAndMessage) {
  Status s = Status::Corruption("bad magic in x.idx");
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.ToString(), "Corruption: bad magic in x.idx");
  Status c = s.WithContext("open index");
  EXPECT_EQ(c.message(), "open index: bad magic in x.idx");
  EXPECT_TRUE(c.IsCorruption());
}

TEST(Status, FromErrnoNamesTheError) {
  Status s = Status::FromErrno("open /nope", ENOENT);
  EXPECT_TRUE(s.IsIOError());
  EXPECT_NE(s.message().find("No such file"), std::string::npos);
}

Result<int> Half(int x) {
  if (x % 2 != 0) return Status::InvalidArgument("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  STRATA_ASSIGN_OR_RETURN(int h, Half(x));
  STRATA_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(Result, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
}

TEST(Types, ParseMetricAndType) {
  EXPECT_EQ(*ParseMetric("l2"), Metric::kL2);
  EXPECT_EQ(*ParseMetric("ip"), Metric::kInnerProduct);
  EXPECT_EQ(*ParseMetric("cosine"), Metric::kCosine);
  EXPECT_FALSE(ParseMetric("hamming").ok());
  EXPECT_EQ(*ParseElementType("uint8"), ElementType::kUint8);
  EXPECT_EQ(ElementSize(ElementType::kBFloat16), 2u);
  EXPECT_FALSE(ParseElementType("double").ok());
}

}  // namespace
}  // namespace strata
