#include "collection/pending_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

namespace strata::collection {
namespace {

TEST(PendingSet, ScanIsExactAndRespectsSnapshots) {
  constexpr std::uint32_t kDim = 8;
  auto set = PendingSet::Create(kDim, Metric::kL2);
  ASSERT_TRUE(set.ok());
  std::mt19937 rng(3);
  std::normal_distribution<float> nd;
  const int n = 2500;  // spans several chunks
  std::vector<float> data(n * kDim);
  for (float& x : data) x = nd(rng);
  for (int i = 0; i < n; ++i) {
    auto pos = (*set)->Append(1000 + i, data.data() + i * kDim, /*seq=*/i + 1);
    ASSERT_TRUE(pos.ok());
    EXPECT_EQ(*pos, static_cast<std::uint32_t>(i));
  }
  (*set)->MarkDead(5, 3000);  // dead from write 3000 on
  std::vector<float> q(kDim);
  for (float& x : q) x = nd(rng);
  auto brute = [&](std::uint64_t snap, std::size_t k) {
    std::vector<std::pair<float, VectorId>> all;
    for (int i = 0; i < n; ++i) {
      if (static_cast<std::uint64_t>(i + 1) > snap) continue;
      if (i == 5 && snap >= 3000) continue;
      float d = 0;
      for (std::uint32_t j = 0; j < kDim; ++j) {
        const float t = q[j] - data[i * kDim + j];
        d += t * t;
      }
      all.emplace_back(d, 1000 + i);
    }
    std::sort(all.begin(), all.end());
    all.resize(std::min(all.size(), k));
    return all;
  };
  for (std::uint64_t snap : {0ull, 10ull, 1500ull, 2999ull, 3000ull}) {
    std::vector<std::pair<float, VectorId>> got;
    (*set)->Scan(q.data(), snap, 10, &got);
    auto want = brute(snap, 10);
    ASSERT_EQ(got.size(), want.size()) << "snapshot " << snap;
    for (std::size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].second, want[i].second) << "snapshot " << snap << " rank " << i;
      EXPECT_NEAR(got[i].first, want[i].first, 1e-4f);
    }
  }
}

TEST(PendingSet, ConcurrentAppendAndScan) {
  constexpr std::uint32_t kDim = 4;
  auto made = PendingSet::Create(kDim, Metric::kL2);
  ASSERT_TRUE(made.ok());
  PendingSet& set = **made;
  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> published{0};
  std::thread writer([&] {
    float v[kDim] = {0, 0, 0, 0};
    for (int i = 0; i < 5000; ++i) {
      v[0] = static_cast<float>(i);
      ASSERT_TRUE(set.Append(i, v, i + 1).ok());
      if (i % 3 == 0 && i > 0) set.MarkDead(static_cast<std::uint32_t>(i - 1), i + 1);
      published.store(i + 1, std::memory_order_release);
    }
    done = true;
  });
  const float q[kDim] = {0, 0, 0, 0};
  std::vector<std::pair<float, VectorId>> out;
  while (!done) {
    const std::uint64_t snap = published.load(std::memory_order_acquire);
    set.Scan(q, snap, 5, &out);
    // Every result was inserted at or before the snapshot.
    for (const auto& [d, id] : out) EXPECT_LE(id + 1, snap);
  }
  writer.join();
}

}  // namespace
}  // namespace strata::collection
