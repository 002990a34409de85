#include "graph/visited_set.h"

#include <algorithm>
#include <bit>

namespace strata::graph {

VisitedSet::VisitedSet(std::size_t expected) {
  const std::size_t cap = std::bit_ceil(std::max<std::size_t>(expected * 2, 64));
  table_.assign(cap, kEmpty);
  mask_ = cap - 1;
  shift_ = 64 - std::countr_zero(cap);
  size_ = 0;
}

void VisitedSet::Clear() {
  // Filling the whole table is cheap because it only grows to what one
  // search needed (a few thousand slots), never to the graph size.
  std::fill(table_.begin(), table_.end(), kEmpty);
  size_ = 0;
}

void VisitedSet::Grow() {
  std::vector<std::uint32_t> old;
  old.swap(table_);
  const std::size_t cap = old.size() * 2;
  table_.assign(cap, kEmpty);
  mask_ = cap - 1;
  shift_ = 64 - std::countr_zero(cap);
  for (const std::uint32_t id : old) {
    if (id == kEmpty) continue;
    std::size_t slot = Hash(id) & mask_;
    while (table_[slot] != kEmpty) slot = (slot + 1) & mask_;
    table_[slot] = id;
  }
}

}  // namespace strata::graph
