// The edge-page cache's policies: what each keeps and evicts, that a hit
// returns the bytes offered, and that concurrent lookups and offers keep it
// consistent (run under ThreadSanitizer in CI).
#include "search/edge_page_cache.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <thread>
#include <vector>

namespace strata::search {
namespace {

using Page = std::array<std::byte, format::kSector>;

Page PageOf(std::uint32_t n) {
  Page p;
  for (std::size_t i = 0; i < p.size(); ++i) p[i] = static_cast<std::byte>((n * 31 + i) & 0xFF);
  return p;
}

// Looks `page` up; on a miss offers it (as a search does after its read).
bool Access(EdgePageCache& cache, std::uint32_t page) {
  Page out;
  if (cache.Lookup(page, out.data())) {
    EXPECT_EQ(out, PageOf(page)) << "page " << page;
    return true;
  }
  const Page p = PageOf(page);
  cache.Offer(page, p.data());
  return false;
}

TEST(EdgePageCache, EveryPolicyReturnsTheBytesOfferedAndStaysWithinCapacity) {
  for (EdgeCachePolicy policy : {EdgeCachePolicy::kNavis, EdgeCachePolicy::kLru,
                                 EdgeCachePolicy::kClock, EdgeCachePolicy::kLfu}) {
    EdgePageCache cache(64, policy);
    std::uint64_t state = 7;
    for (int i = 0; i < 20000; ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      Access(cache, static_cast<std::uint32_t>((state >> 33) % 300));
      ASSERT_LE(cache.size(), 64u);
    }
    EXPECT_EQ(cache.hits() + cache.misses(), 20000u);
    EXPECT_GT(cache.hits(), 0u);
  }
}

TEST(EdgePageCache, LruEvictsTheLeastRecentAndClockGivesASecondChance) {
  EdgePageCache lru(8, EdgeCachePolicy::kLru);
  for (std::uint32_t p = 0; p < 8; ++p) Access(lru, p);
  EXPECT_TRUE(Access(lru, 0));   // 0 is now the most recent
  EXPECT_FALSE(Access(lru, 8));  // evicts 1, the least recent
  EXPECT_TRUE(Access(lru, 0));
  EXPECT_FALSE(Access(lru, 1));

  EdgePageCache clock(8, EdgeCachePolicy::kClock);
  for (std::uint32_t p = 0; p < 8; ++p) Access(clock, p);
  EXPECT_TRUE(Access(clock, 0));    // referenced: survives one sweep
  EXPECT_FALSE(Access(clock, 8));   // evicts 1
  EXPECT_TRUE(Access(clock, 0));
  EXPECT_TRUE(Access(clock, 2));
  EXPECT_FALSE(Access(clock, 1));
}

TEST(EdgePageCache, LfuKeepsFrequentPages) {
  EdgePageCache lfu(16, EdgeCachePolicy::kLfu);
  for (int round = 0; round < 20; ++round) {
    for (std::uint32_t p = 0; p < 8; ++p) Access(lfu, p);
  }
  for (std::uint32_t p = 100; p < 400; ++p) Access(lfu, p);  // a scan of one-off pages
  int kept = 0;
  for (std::uint32_t p = 0; p < 8; ++p) kept += Access(lfu, p) ? 1 : 0;
  EXPECT_GE(kept, 6);
}

// An in-place update moves hot lists to new pages: a page offered with the
// heat of the page it replaces is kept as that page was (LFU: its count;
// navis: straight into the main region), through a scan of one-off pages.
TEST(EdgePageCache, MovedHotPagesStayHot) {
  for (EdgeCachePolicy policy : {EdgeCachePolicy::kLfu, EdgeCachePolicy::kNavis}) {
    EdgePageCache cache(64, policy);
    for (int round = 0; round < 20; ++round) {
      for (std::uint32_t p = 0; p < 4; ++p) Access(cache, p);
    }
    EXPECT_EQ(cache.Heat(5000), 0u);
    for (std::uint32_t p = 0; p < 4; ++p) {
      const std::uint32_t heat = cache.Heat(p);
      ASSERT_GT(heat, 0u) << p;
      if (policy == EdgeCachePolicy::kLfu) {
        EXPECT_GE(heat, 10u);
      }
      const Page moved = PageOf(p + 50);
      cache.Offer(p + 50, moved.data(), heat);
      cache.Invalidate(p);  // every list left it
      EXPECT_EQ(cache.Heat(p), 0u);
    }
    for (std::uint32_t p = 100; p < 1000; ++p) Access(cache, p);  // one-off pages
    int kept = 0;
    for (std::uint32_t p = 50; p < 54; ++p) kept += Access(cache, p) ? 1 : 0;
    EXPECT_GE(kept, 3) << static_cast<int>(policy);
  }
}

TEST(EdgePageCache, NavisWindowKeepsTheHotSetThroughOneOffScans) {
  // Pages re-read soon after their first read (the hot set near the entry
  // points) are promoted out of the window; later scans of pages read once
  // pass through the window without displacing them, where LRU loses the
  // hot set to every scan longer than the cache.
  auto run = [](EdgeCachePolicy policy) {
    EdgePageCache cache(64, policy);
    for (std::uint32_t p = 0; p < 40; ++p) {
      Access(cache, p);
      Access(cache, p);
    }
    std::uint32_t next_cold = 1000;
    std::uint64_t hot_hits = 0;
    for (int round = 0; round < 20; ++round) {
      for (int c = 0; c < 200; ++c) Access(cache, next_cold++);
      for (std::uint32_t p = 0; p < 40; ++p) hot_hits += Access(cache, p) ? 1 : 0;
    }
    return hot_hits;
  };
  EXPECT_EQ(run(EdgeCachePolicy::kNavis), 20u * 40);
  EXPECT_EQ(run(EdgeCachePolicy::kLru), 0u);
}

TEST(EdgePageCache, ConcurrentLookupsAndOffersStayConsistent) {
  for (EdgeCachePolicy policy : {EdgeCachePolicy::kNavis, EdgeCachePolicy::kLru,
                                 EdgeCachePolicy::kClock, EdgeCachePolicy::kLfu}) {
    EdgePageCache cache(32, policy);
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&cache, t] {
        for (std::uint32_t i = 0; i < 3000; ++i) Access(cache, (i * (t + 3)) % 97);
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_LE(cache.size(), 32u);
    EXPECT_EQ(cache.hits() + cache.misses(), 9000u);
  }
}

}  // namespace
}  // namespace strata::search
