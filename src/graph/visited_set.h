// VisitedSet: the set of node ids a graph search has already scored.
//
// An open-addressing hash set whose size follows the search, not the graph:
// a search at L = 125, R = 64 touches a few thousand ids, so the table stays
// in L1/L2 and clearing it costs only its own size, while a per-thread
// n-sized bitmap or epoch array would cost n bytes per thread (gigabytes for
// a 100M-node shard on many threads). Not thread-safe; one per thread.
#ifndef STRATA_GRAPH_VISITED_SET_H_
#define STRATA_GRAPH_VISITED_SET_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::graph {

class VisitedSet {
 public:
  // `expected` = ids one search usually inserts; the table starts at twice
  // that (rounded to a power of two) and doubles at half load.
  explicit VisitedSet(std::size_t expected = 2048);

  // Removes every id; keeps the allocation.
  void Clear();

  // Adds `id` (any value except 0xFFFFFFFF). Returns true if it was absent.
  bool Insert(std::uint32_t id) {
    std::size_t slot = Hash(id) & mask_;
    for (;;) {
      const std::uint32_t cur = table_[slot];
      if (cur == id) return false;
      if (cur == kEmpty) break;
      slot = (slot + 1) & mask_;
    }
    table_[slot] = id;
    if (++size_ * 2 > table_.size()) Grow();
    return true;
  }

  bool Contains(std::uint32_t id) const {
    std::size_t slot = Hash(id) & mask_;
    for (;;) {
      const std::uint32_t cur = table_[slot];
      if (cur == id) return true;
      if (cur == kEmpty) return false;
      slot = (slot + 1) & mask_;
    }
  }

  std::size_t size() const { return size_; }

  // Calls fn(id) for every id in the set, in unspecified (but deterministic) order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const std::uint32_t id : table_) {
      if (id != kEmpty) fn(id);
    }
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  // Fibonacci hashing: ids of nearby nodes are often close numbers, and the
  // multiply spreads them across the table.
  std::size_t Hash(std::uint32_t id) const {
    return static_cast<std::size_t>((static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ull) >>
                                    shift_);
  }
  void Grow();

  std::vector<std::uint32_t> table_;
  std::size_t mask_ = 0;
  int shift_ = 0;  // 64 - log2(table size)
  std::size_t size_ = 0;
};

}  // namespace strata::graph

#endif  // STRATA_GRAPH_VISITED_SET_H_
