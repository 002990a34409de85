#include "search/speculative_rerank.h"

#include <algorithm>
#include <deque>
#include <random>

#include <gtest/gtest.h>

namespace strata::search {
namespace {

// Exact distances from a table; records what was read.
class TableFetcher : public VectorFetcher {
 public:
  explicit TableFetcher(std::vector<float> exact) : exact_(std::move(exact)) {}
  Status Submit(std::span<const graph::NodeId> ids) override {
    if (in_flight_.size() >= 2) return Status::InvalidArgument("more than two groups in flight");
    in_flight_.emplace_back(ids.begin(), ids.end());
    reads_ += ids.size();
    return Status::OK();
  }
  Status Collect(std::span<float> d) override {
    if (in_flight_.empty() || in_flight_.front().size() != d.size()) {
      return Status::InvalidArgument("collect does not match a submitted group");
    }
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = exact_[in_flight_.front()[i]];
    in_flight_.pop_front();
    return Status::OK();
  }
  std::size_t reads_ = 0;
  std::deque<std::vector<graph::NodeId>> in_flight_;

 private:
  std::vector<float> exact_;
};

std::vector<graph::Neighbor> ByPq(const std::vector<float>& pq) {
  std::vector<graph::Neighbor> c;
  for (graph::NodeId i = 0; i < pq.size(); ++i) c.push_back({i, pq[i]});
  std::sort(c.begin(), c.end(), graph::NeighborLess);
  return c;
}

TEST(SpeculativeRerank, StopsEarlyWhenPqOrderIsExact) {
  std::vector<float> exact(100);
  for (std::size_t i = 0; i < exact.size(); ++i) exact[i] = static_cast<float>(i);
  TableFetcher f(exact);
  auto r = SpeculativeRerank(ByPq(exact), 10, 8, &f);
  ASSERT_TRUE(r.ok());
  // Group 0 holds 8 of the top 10, group 1 completes it (0..9), group 2
  // leaves it unchanged (settled), group 3 was already in flight.
  EXPECT_EQ(r->groups, 4u);
  EXPECT_EQ(f.reads_, 32u);
  EXPECT_TRUE(f.in_flight_.empty());
  ASSERT_EQ(r->top.size(), 10u);
  for (std::uint32_t i = 0; i < 10; ++i) EXPECT_EQ(r->top[i].id, i);
}

TEST(SpeculativeRerank, MatchesFullRerankWhenItReadsEverything) {
  std::mt19937 rng(3);
  std::normal_distribution<float> noise(0.0f, 1.0f);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<float> exact(60), pq(60);
    for (std::size_t i = 0; i < exact.size(); ++i) {
      exact[i] = std::abs(noise(rng)) * 10;
      pq[i] = exact[i] + noise(rng) * 3;  // noisy PQ estimate
    }
    TableFetcher f(exact);
    auto r = SpeculativeRerank(ByPq(pq), 5, 4, &f);
    ASSERT_TRUE(r.ok());
    // Exact distances are exact, the top is the exact top of what was read,
    // and reading all 60 gives the true top 5.
    for (const graph::Neighbor& nb : r->exact) EXPECT_EQ(nb.distance, exact[nb.id]);
    std::vector<graph::Neighbor> read = r->exact;
    std::sort(read.begin(), read.end(), graph::NeighborLess);
    for (std::size_t i = 0; i < r->top.size(); ++i) EXPECT_EQ(r->top[i].id, read[i].id);
    TableFetcher all(exact);
    auto full = SpeculativeRerank(ByPq(pq), 5, 60, &all);
    ASSERT_TRUE(full.ok());
    std::vector<graph::Neighbor> truth = ByPq(exact);
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(full->top[i].id, truth[i].id);
    EXPECT_LE(f.reads_, 60u);
  }
}

TEST(SpeculativeRerank, EdgeCasesAndErrors) {
  TableFetcher f({1.0f, 2.0f});
  auto empty = SpeculativeRerank({}, 3, 2, &f);
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->top.empty());
  std::vector<graph::Neighbor> two = {{1, 0.0f}, {0, 1.0f}};
  auto r = SpeculativeRerank(two, 3, 5, &f);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->top.size(), 2u);
  EXPECT_EQ(r->top[0].id, 0u);
  EXPECT_TRUE(SpeculativeRerank(two, 0, 5, &f).status().IsInvalidArgument());
  EXPECT_TRUE(SpeculativeRerank(two, 1, 0, &f).status().IsInvalidArgument());
}

}  // namespace
}  // namespace strata::search
