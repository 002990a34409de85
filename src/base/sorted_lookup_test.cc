// ForEachFoundAscending against std::lower_bound, on dense tables, tables
// with gaps, and keys below, inside and past the table.
#include "base/sorted_lookup.h"

#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

namespace strata {
namespace {

std::vector<std::size_t> Reference(const std::vector<std::uint64_t>& table,
                                   const std::vector<std::uint64_t>& keys) {
  std::vector<std::size_t> out;
  for (std::uint64_t k : keys) {
    auto it = std::lower_bound(table.begin(), table.end(), k);
    if (it != table.end() && *it == k) out.push_back(static_cast<std::size_t>(it - table.begin()));
  }
  return out;
}

std::vector<std::size_t> Found(const std::vector<std::uint64_t>& table,
                               const std::vector<std::uint64_t>& keys) {
  std::vector<std::size_t> out;
  ForEachFoundAscending(
      table.begin(), table.end(), keys, [](std::uint64_t e) { return e; },
      [&](auto it) { out.push_back(static_cast<std::size_t>(it - table.begin())); });
  return out;
}

TEST(SortedLookup, MatchesBinarySearchOnDenseAndGappedTables) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    // Gaps from none (dense ids, the one-probe case) to most ids missing.
    const unsigned keep_percent = trial % 4 == 0 ? 100 : 10 + static_cast<unsigned>(rng() % 90);
    const std::uint64_t first = rng() % 50;
    std::vector<std::uint64_t> table;
    for (std::uint64_t id = first; table.size() < 1 + rng() % 3000; ++id) {
      if (rng() % 100 < keep_percent) table.push_back(id);
    }
    std::vector<std::uint64_t> keys;
    const std::uint64_t past = table.back() + 100;
    for (std::uint64_t id = 0; id < past; ++id) {
      if (rng() % 100 < 1 + trial % 30) keys.push_back(id);
    }
    ASSERT_EQ(Found(table, keys), Reference(table, keys)) << "trial " << trial;
  }
}

TEST(SortedLookup, EdgeCases) {
  const std::vector<std::uint64_t> table = {5, 6, 7, 10};
  EXPECT_EQ(Found(table, {}), (std::vector<std::size_t>{}));
  EXPECT_EQ(Found(table, {0, 1, 4}), (std::vector<std::size_t>{}));  // all below
  EXPECT_EQ(Found(table, {11, 12}), (std::vector<std::size_t>{}));   // all past
  EXPECT_EQ(Found(table, {5, 8, 9, 10, 99}), (std::vector<std::size_t>{0, 3}));
  EXPECT_EQ(Found(table, {7, 7}), (std::vector<std::size_t>{2, 2}));  // repeats found again
  EXPECT_EQ(Found({}, {1, 2}), (std::vector<std::size_t>{}));
  // Pairs keyed by their first member (a map sorted by user id).
  const std::vector<std::pair<std::uint64_t, std::uint32_t>> by_id = {{3, 7}, {9, 1}, {40, 2}};
  std::vector<std::uint32_t> slots;
  ForEachFoundAscending(
      by_id.begin(), by_id.end(), std::vector<std::uint64_t>{3, 4, 40},
      [](const auto& e) { return e.first; }, [&](auto it) { slots.push_back(it->second); });
  EXPECT_EQ(slots, (std::vector<std::uint32_t>{7, 2}));
}

}  // namespace
}  // namespace strata
