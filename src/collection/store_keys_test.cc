#include "collection/store_keys.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace strata::collection {
namespace {

TEST(StoreKeys, IdKeysRoundTripAndSortById) {
  const std::vector<VectorId> ids = {0, 1, 255, 256, 1ull << 40, ~0ull};
  std::string previous;
  for (VectorId id : ids) {
    const std::string key = IdKey(kVectorPrefix, id);
    ASSERT_EQ(key.size(), 9u);
    auto back = ParseIdKey(key, kVectorPrefix);
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, id);
    EXPECT_LT(previous, key);  // big-endian: byte order is id order
    previous = key;
  }
  EXPECT_FALSE(ParseIdKey(IdKey(kPendingPrefix, 3), kVectorPrefix).ok());
  EXPECT_FALSE(ParseIdKey("v123", kVectorPrefix).ok());
}

TEST(StoreKeys, RecordRoundTripAndRejectsDamage) {
  std::vector<std::byte> vec(12);
  for (std::size_t i = 0; i < vec.size(); ++i) vec[i] = static_cast<std::byte>(i * 7);
  const std::string rec = EncodeRecord(42, vec, "payload");
  auto r = DecodeRecord(rec, vec.size());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->seq, 42u);
  EXPECT_EQ(r->payload, "payload");
  EXPECT_EQ(std::memcmp(r->vector.data(), vec.data(), vec.size()), 0);
  EXPECT_EQ(DecodeRecord(rec, vec.size() + 1).status().code(), StatusCode::kCorruption);
  EXPECT_EQ(DecodeRecord(rec.substr(0, 5), vec.size()).status().code(), StatusCode::kCorruption);
  std::string future = rec;
  future[0] = 9;
  EXPECT_EQ(DecodeRecord(future, vec.size()).status().code(), StatusCode::kNotSupported);
  auto u = DecodeU64(EncodeU64(0x0102030405060708ull));
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(*u, 0x0102030405060708ull);
  EXPECT_FALSE(DecodeU64("short").ok());
}

}  // namespace
}  // namespace strata::collection
