#include "graph/adjacency.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <new>
#include <string>

namespace strata::graph {

Result<FlatAdjacency> FlatAdjacency::Create(std::size_t n, std::uint32_t capacity) {
  if (capacity == 0) return Status::InvalidArgument("FlatAdjacency: capacity must be > 0");
  if (n >= kInvalidNode) {
    return Status::InvalidArgument("FlatAdjacency: " + std::to_string(n) +
                                   " nodes exceed the uint32 id space");
  }
  const std::size_t words = n * (static_cast<std::size_t>(capacity) + 1);
  FlatAdjacency g;
  // The one large allocation of a build; report failure as a Status instead
  // of letting bad_alloc escape the library.
  try {
    g.words_.assign(words, kInvalidNode);
  } catch (const std::bad_alloc&) {
    return Status::Aborted("FlatAdjacency: cannot allocate " +
                           std::to_string(words * sizeof(std::uint32_t)) + " bytes");
  }
  g.n_ = static_cast<std::uint32_t>(n);
  g.capacity_ = capacity;
  for (std::size_t i = 0; i < n; ++i) g.words_[g.Block(static_cast<NodeId>(i))] = 0;
  return g;
}

void FlatAdjacency::Set(NodeId i, std::span<const NodeId> ids) {
  assert(ids.size() <= capacity_);
  const std::size_t b = Block(i);
  std::copy(ids.begin(), ids.end(), words_.begin() + static_cast<std::ptrdiff_t>(b + 1));
  // Clear the tail so stale ids never leak into a later copy of the block.
  std::fill(words_.begin() + static_cast<std::ptrdiff_t>(b + 1 + ids.size()),
            words_.begin() + static_cast<std::ptrdiff_t>(b + 1 + capacity_), kInvalidNode);
  words_[b] = static_cast<std::uint32_t>(ids.size());
}

bool FlatAdjacency::Contains(NodeId i, NodeId id) const {
  const auto nb = Neighbors(i);
  return std::find(nb.begin(), nb.end(), id) != nb.end();
}

void FlatAdjacency::ShrinkCapacity(std::uint32_t new_capacity) {
  assert(new_capacity >= 1 && new_capacity <= capacity_);
  if (new_capacity == capacity_) return;
  const std::size_t old_stride = static_cast<std::size_t>(capacity_) + 1;
  const std::size_t new_stride = static_cast<std::size_t>(new_capacity) + 1;
  // Forward order is safe: block i moves to a lower or equal address and never
  // overwrites a block not yet moved.
  for (std::size_t i = 0; i < n_; ++i) {
    const std::uint32_t* src = words_.data() + i * old_stride;
    std::uint32_t* dst = words_.data() + i * new_stride;
    assert(src[0] <= new_capacity);
    std::copy(src, src + new_stride, dst);
  }
  words_.resize(static_cast<std::size_t>(n_) * new_stride);
  words_.shrink_to_fit();
  capacity_ = new_capacity;
}

std::uint64_t FlatAdjacency::NumEdges() const {
  std::uint64_t e = 0;
  for (NodeId i = 0; i < n_; ++i) e += Degree(i);
  return e;
}

}  // namespace strata::graph
