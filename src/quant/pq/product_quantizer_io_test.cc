#include <gtest/gtest.h>

#include "quant/pq/pq_adc.h"
#include "quant/pq/pq_test_util.h"
#include "quant/pq/product_quantizer.h"

namespace strata::quant {
namespace {

ProductQuantizer TrainSmall(bool center) {
  const auto x = testing::RandomData(400, 10, 1);
  PqOptions o;
  o.m = 3;
  o.center = center;
  o.iterations = 3;
  auto pq = ProductQuantizer::Train(x.data(), 400, 10, o);
  EXPECT_TRUE(pq.ok());
  return std::move(pq).value();
}

TEST(ProductQuantizerIo, RoundTripIsExact) {
  for (const bool center : {true, false}) {
    const ProductQuantizer pq = TrainSmall(center);
    const auto bytes = pq.Serialize();
    // Header 24 + offsets 16 + mean + codebook 256*10*4 + checksum 8.
    EXPECT_EQ(bytes.size(), 24u + 16u + (center ? 40u : 0u) + 10240u + 8u);
    auto back = ProductQuantizer::Deserialize(bytes);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->dim(), 10u);
    EXPECT_EQ(back->m(), 3u);
    EXPECT_EQ(back->offsets(), pq.offsets());
    EXPECT_EQ(back->mean(), pq.mean());
    EXPECT_EQ(back->centroids(), pq.centroids());
    EXPECT_EQ(back->Serialize(), bytes);
    // Same tables from the copy.
    const auto q = testing::RandomData(1, 10, 2);
    PqDistanceTable a, b;
    ASSERT_TRUE(pq.ComputeDistanceTable(q.data(), Metric::kInnerProduct, &a).ok());
    ASSERT_TRUE(back->ComputeDistanceTable(q.data(), Metric::kInnerProduct, &b).ok());
    EXPECT_EQ(a.values, b.values);
    EXPECT_EQ(a.bias, b.bias);
  }
}

TEST(ProductQuantizerIo, DetectsCorruption) {
  const auto bytes = TrainSmall(true).Serialize();
  // Any flipped byte: magic, header, payload or checksum.
  for (const std::size_t pos : {std::size_t{0}, std::size_t{9}, std::size_t{30},
                                bytes.size() / 2, bytes.size() - 1}) {
    auto bad = bytes;
    bad[pos] ^= 0x10;
    const Status s = ProductQuantizer::Deserialize(bad).status();
    EXPECT_TRUE(s.IsCorruption() || s.IsNotSupported()) << "byte " << pos << ": " << s.ToString();
  }
  auto truncated = bytes;
  truncated.resize(bytes.size() - 4);
  EXPECT_TRUE(ProductQuantizer::Deserialize(truncated).status().IsCorruption());
  EXPECT_TRUE(ProductQuantizer::Deserialize({}).status().IsCorruption());
  auto future = bytes;
  future[4] = 2;  // version 2
  EXPECT_TRUE(ProductQuantizer::Deserialize(future).status().IsNotSupported());
}

}  // namespace
}  // namespace strata::quant
