#include "search/disk_candidates.h"

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace strata::search {
namespace {

TEST(DiskCandidates, KeepsTheBestSortedAndTracksStates) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  DiskCandidates list;
  list.Reset(16);
  std::vector<std::pair<float, std::uint32_t>> all;
  for (std::uint32_t id = 0; id < 200; ++id) {
    const float d = u(rng);
    all.push_back({d, id});
    list.Insert(id, d);
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(list.size(), 16u);
  for (std::size_t i = 0; i < 16; ++i) {
    EXPECT_EQ(list[i].id, all[i].second);
    EXPECT_EQ(list[i].state, DiskCandidates::kNew);
  }
  EXPECT_TRUE(list.WouldKeep(all[15].first));
  EXPECT_FALSE(list.WouldKeep(all[16].first));
  // Take the nearest two, mark the fourth done: the frontier skips both kinds.
  EXPECT_EQ(list.TakeNew().id, all[0].second);
  EXPECT_EQ(list.TakeNew().id, all[1].second);
  EXPECT_TRUE(list.SetState(all[2].second, DiskCandidates::kDone));
  EXPECT_FALSE(list.SetState(all[100].second, DiskCandidates::kDone));
  EXPECT_EQ(list.FirstNew(), 3u);
  EXPECT_EQ(list.TakeNew().id, all[3].second);
  // A better candidate moves the frontier back to the front.
  EXPECT_TRUE(list.Insert(1000, -1.0f));
  EXPECT_EQ(list.FirstNew(), 0u);
  EXPECT_EQ(list.TakeNew().id, 1000u);
  std::set<std::uint32_t> taken;
  while (list.HasNew()) taken.insert(list.TakeNew().id);
  EXPECT_EQ(taken.size(), 16u - 5u);  // 16 kept, 4 taken + 1 done before
}

}  // namespace
}  // namespace strata::search
