#include "base/parse.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(Parse, UintList) {
  auto r = ParseUintList("10,20,300");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<std::uint64_t>{10, 20, 300}));
  EXPECT_FALSE(ParseUintList("10,,20").ok());
  EXPECT_FALSE(ParseUintList("-1").ok());
  EXPECT_FALSE(ParseUintList("4x").ok());
  EXPECT_FALSE(ParseUintList("99999999999999999999999").ok());
}

TEST(Parse, DoubleList) {
  auto r = ParseDoubleList("0.5,0.95");
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ((*r)[1], 0.95);
  EXPECT_FALSE(ParseDoubleList("nan").ok());
  EXPECT_FALSE(ParseDoubleList("1.0x").ok());
}

TEST(Parse, ByteSize) {
  EXPECT_EQ(*ParseByteSize("4096"), 4096u);
  EXPECT_EQ(*ParseByteSize("64K"), 65536u);
  EXPECT_EQ(*ParseByteSize("2G"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("2GiB"), 2ull << 30);
  EXPECT_EQ(*ParseByteSize("3mb"), 3ull << 20);
  EXPECT_FALSE(ParseByteSize("2X").ok());
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("99999999999T").ok());
}

}  // namespace
}  // namespace strata
