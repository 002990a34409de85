#include "ivf/page_packing.h"

#include <gtest/gtest.h>

#include <vector>

namespace strata::ivf {
namespace {

TEST(PagePacking, RecordsPerPageNeverCrossAPayload) {
  auto p = PagePacking::Make(144, 4088);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->records_per_unit(), 28u);  // 28 * 144 = 4032 <= 4088 < 29 * 144
  EXPECT_EQ(p->pages_per_unit(), 1u);
  for (std::uint64_t pos = 0; pos < 200; ++pos) {
    const RecordPlace r = p->Locate(10, pos);
    EXPECT_EQ(r.unit, 10 + pos / 28);
    EXPECT_LE(r.byte_offset + 144u, 4088u);
  }
  EXPECT_EQ(p->UnitsFor(0), 0u);
  EXPECT_EQ(p->UnitsFor(28), 1u);
  EXPECT_EQ(p->UnitsFor(29), 2u);
  const std::vector<std::uint64_t> sizes = {29, 0, 56, 1};
  EXPECT_EQ(p->FirstUnits(sizes), (std::vector<std::uint64_t>{0, 2, 2, 4, 5}));
}

TEST(PagePacking, ExactFitAndLargeRecords) {
  auto fit = PagePacking::Make(4088, 4088);
  ASSERT_TRUE(fit.ok());
  EXPECT_EQ(fit->records_per_unit(), 1u);
  EXPECT_EQ(fit->pages_per_unit(), 1u);
  auto big = PagePacking::Make(3 * 4088 + 5, 4088);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->records_per_unit(), 1u);
  EXPECT_EQ(big->pages_per_unit(), 4u);
  EXPECT_EQ(big->Locate(3, 2).first_page, 20u);
  EXPECT_FALSE(PagePacking::Make(0, 4088).ok());
}

TEST(PagePacking, ScatterGatherRoundTrip) {
  for (std::size_t rec : {std::size_t{100}, std::size_t{9000}}) {
    auto p = PagePacking::Make(rec, 4088);
    ASSERT_TRUE(p.ok());
    const std::size_t stride = 4096;
    std::vector<std::uint8_t> unit(p->pages_per_unit() * stride, 0xEE);
    std::vector<std::vector<std::uint8_t>> records(p->records_per_unit(),
                                                   std::vector<std::uint8_t>(rec));
    for (std::uint32_t s = 0; s < p->records_per_unit(); ++s) {
      for (std::size_t i = 0; i < rec; ++i)
        records[s][i] = static_cast<std::uint8_t>(s * 31 + i * 7);
      p->Scatter(records[s].data(), s, unit.data(), stride);
    }
    // Trailer bytes of every page stay untouched.
    for (std::uint32_t pg = 0; pg < p->pages_per_unit(); ++pg) {
      for (std::size_t i = 4088; i < 4096; ++i) EXPECT_EQ(unit[pg * stride + i], 0xEE);
    }
    std::vector<std::uint8_t> scratch(rec);
    for (std::uint32_t s = 0; s < p->records_per_unit(); ++s) {
      const std::uint8_t* got = p->Gather(unit.data(), s, stride, scratch.data());
      EXPECT_EQ(std::vector<std::uint8_t>(got, got + rec), records[s]) << rec << " " << s;
    }
  }
}

}  // namespace
}  // namespace strata::ivf
