#include <gtest/gtest.h>

#include "strata/search.h"

namespace strata {
namespace {

class PassAll : public IdFilter {
 public:
  bool Accept(std::uint64_t) const override { return true; }
};

TEST(SearchParams, FilterFractionWidensTheWalk) {
  PassAll f;
  SearchParams p;
  p.k = 10;
  p.list_size = 50;
  p.nprobe = 10;
  EXPECT_EQ(p.EffectiveListSize(), 50u);  // no filter: as given
  p.filter = &f;
  EXPECT_EQ(p.EffectiveListSize(), 50u);  // fraction 1: as given
  EXPECT_EQ(p.EffectiveNprobe(30), 10u);
  p.filter_fraction = 0.1f;
  EXPECT_EQ(p.EffectiveListSize(), 200u);  // 2 k / f
  EXPECT_EQ(p.EffectiveNprobe(30), 10u);   // 0.1 / f = 1
  p.filter_fraction = 0.01f;
  EXPECT_EQ(p.EffectiveListSize(), 400u);  // capped at 8 L
  EXPECT_EQ(p.EffectiveNprobe(30), 100u);
  p.nprobe = 0;
  p.filter_fraction = 1e-5f;
  EXPECT_EQ(p.EffectiveNprobe(30), 480u);  // the default, at most 16x
  p.filter_fraction = 0.5f;
  EXPECT_EQ(p.EffectiveListSize(), 50u);  // never below L
  EXPECT_TRUE(p.Validate().ok());
  p.filter_fraction = 0.0f;
  EXPECT_FALSE(p.Validate().ok());
  p.filter_fraction = 1.5f;
  EXPECT_FALSE(p.Validate().ok());
}

}  // namespace
}  // namespace strata
