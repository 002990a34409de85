// Tests of the small building blocks: CandidateList, VisitedSet, FlatAdjacency, SpinLock.
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "graph/adjacency.h"
#include "graph/neighbor.h"
#include "graph/spin_lock.h"
#include "graph/visited_set.h"

namespace strata::graph {
namespace {

TEST(CandidateList, KeepsBestSortedAndExpandsNearestFirst) {
  CandidateList list;
  list.Reset(3);
  EXPECT_FALSE(list.HasUnexpanded());
  EXPECT_TRUE(list.Insert(10, 5.0f));
  EXPECT_TRUE(list.Insert(11, 1.0f));
  EXPECT_TRUE(list.Insert(12, 3.0f));
  EXPECT_FALSE(list.Insert(13, 7.0f));  // full and worse than the worst
  EXPECT_FALSE(list.Insert(14, 5.0f));  // tie with the worst, larger id: not better
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, 11u);
  EXPECT_EQ(list[1].id, 12u);
  EXPECT_EQ(list[2].id, 10u);

  EXPECT_EQ(list.ExpandNext().id, 11u);
  EXPECT_EQ(list.ExpandNext().id, 12u);
  // A better candidate arriving after expansions becomes the next to expand.
  EXPECT_TRUE(list.Insert(15, 2.0f));  // evicts 10
  ASSERT_TRUE(list.HasUnexpanded());
  EXPECT_EQ(list.ExpandNext().id, 15u);
  EXPECT_FALSE(list.HasUnexpanded());
  EXPECT_EQ(list[1].id, 15u);
  EXPECT_FLOAT_EQ(list[1].distance, 2.0f);
  EXPECT_EQ(list[2].id, 12u);
}

TEST(CandidateList, TiesBreakByIdAndMatchesSortedReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const std::size_t cap = 1 + rng() % 20;
    CandidateList list;
    list.Reset(cap);
    std::vector<Neighbor> all;
    for (NodeId id = 0; id < 60; ++id) {
      const Neighbor nb{id, static_cast<float>(rng() % 10)};  // many ties
      all.push_back(nb);
      list.Insert(nb.id, nb.distance);
    }
    std::sort(all.begin(), all.end(), NeighborLess);
    ASSERT_EQ(list.size(), cap);
    for (std::size_t i = 0; i < cap; ++i) {
      EXPECT_EQ(list[i].id, all[i].id);
      EXPECT_EQ(list[i].distance, all[i].distance);
    }
  }
}

TEST(VisitedSet, MatchesStdSetThroughGrowthAndClear) {
  VisitedSet v(4);
  std::set<std::uint32_t> ref;
  std::mt19937 rng(3);
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 5000; ++i) {
      const std::uint32_t id = rng() % 20000;
      EXPECT_EQ(v.Insert(id), ref.insert(id).second);
    }
    EXPECT_EQ(v.size(), ref.size());
    for (std::uint32_t id = 0; id < 20000; id += 7) EXPECT_EQ(v.Contains(id), ref.count(id) == 1);
    v.Clear();
    ref.clear();
    EXPECT_EQ(v.size(), 0u);
    EXPECT_FALSE(v.Contains(0));
  }
  EXPECT_TRUE(v.Insert(0xFFFFFFFEu));
  EXPECT_TRUE(v.Contains(0xFFFFFFFEu));
}

TEST(FlatAdjacency, SetAppendContainsAndCapacity) {
  auto g = FlatAdjacency::Create(4, 3);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->size(), 4u);
  EXPECT_EQ(g->capacity(), 3u);
  for (NodeId i = 0; i < 4; ++i) EXPECT_EQ(g->Degree(i), 0u);
  EXPECT_TRUE(g->Append(0, 1));
  EXPECT_TRUE(g->Append(0, 2));
  EXPECT_TRUE(g->Append(0, 3));
  EXPECT_FALSE(g->Append(0, 1));  // full
  EXPECT_EQ(g->Degree(0), 3u);
  EXPECT_TRUE(g->Contains(0, 2));
  EXPECT_FALSE(g->Contains(1, 2));
  const NodeId ids[2] = {3, 0};
  g->Set(2, ids);
  ASSERT_EQ(g->Degree(2), 2u);
  EXPECT_EQ(g->Neighbors(2)[0], 3u);
  EXPECT_EQ(g->Neighbors(2)[1], 0u);
  g->Set(0, std::span<const NodeId>(ids, 1));  // shrinking a list clears its tail
  EXPECT_EQ(g->Degree(0), 1u);
  EXPECT_FALSE(g->Contains(0, 2));
  g->Replace(2, 1, 1);
  EXPECT_EQ(g->Neighbors(2)[1], 1u);
  EXPECT_EQ(g->NumEdges(), 3u);

  EXPECT_TRUE(FlatAdjacency::Create(4, 0).status().IsInvalidArgument());
  EXPECT_TRUE(FlatAdjacency::Create(0xFFFFFFFFull, 4).status().IsInvalidArgument());
}

TEST(FlatAdjacency, ShrinkCapacityKeepsEveryList) {
  constexpr NodeId kN = 500;
  auto g = FlatAdjacency::Create(kN, 9);
  ASSERT_TRUE(g.ok());
  std::mt19937 rng(11);
  std::vector<std::vector<NodeId>> ref(kN);
  for (NodeId i = 0; i < kN; ++i) {
    const std::size_t d = rng() % 6;  // <= new capacity
    for (std::size_t k = 0; k < d; ++k) ref[i].push_back(rng() % kN);
    g->Set(i, ref[i]);
  }
  const std::size_t before = g->MemoryBytes();
  g->ShrinkCapacity(5);
  EXPECT_EQ(g->capacity(), 5u);
  EXPECT_LT(g->MemoryBytes(), before);
  for (NodeId i = 0; i < kN; ++i) {
    const auto nb = g->Neighbors(i);
    ASSERT_EQ(std::vector<NodeId>(nb.begin(), nb.end()), ref[i]) << "node " << i;
  }
  // The re-laid array still appends up to the new capacity and no further.
  NodeId small = 0;
  while (g->Degree(small) != 0) ++small;
  for (NodeId k = 0; k < 5; ++k) EXPECT_TRUE(g->Append(small, k));
  EXPECT_FALSE(g->Append(small, 5));
  EXPECT_EQ(g->Neighbors(small)[4], 4u);
  if (small + 1 < kN) {
    EXPECT_EQ(g->Degree(small + 1), ref[small + 1].size());
  }
}

TEST(SpinLock, ProvidesMutualExclusion) {
  SpinLock lock;
  long counter = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20000; ++i) {
        std::lock_guard<SpinLock> guard(lock);
        ++counter;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(counter, 80000);
  EXPECT_TRUE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock());
  lock.unlock();
}

}  // namespace
}  // namespace strata::graph
