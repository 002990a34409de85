// FlatAdjacency: out-neighbour lists of an in-memory graph in one flat array.
//
// Node i owns a fixed block of 1 + capacity() uint32 words: its degree, then
// `capacity()` id slots (unused slots hold kInvalidNode). One allocation, no
// per-node vectors: 4 * (capacity + 1) bytes per node, e.g. 336 bytes at the
// build's slack capacity 83 (R = 64), 260 bytes once compacted to R. The
// degree sits next to the ids so reading a list touches one or two cache lines.
//
// Thread-safety: none of its own. Concurrent builders guard node i with a
// per-node lock (see spin_lock.h); readers after the build need no locking.
#ifndef STRATA_GRAPH_ADJACENCY_H_
#define STRATA_GRAPH_ADJACENCY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/neighbor.h"
#include "strata/result.h"

namespace strata::graph {

class FlatAdjacency {
 public:
  FlatAdjacency() = default;

  // n nodes with `capacity` slots each, all lists empty. InvalidArgument if
  // capacity == 0 or n >= 2^32 - 1; Aborted if the array cannot be allocated.
  static Result<FlatAdjacency> Create(std::size_t n, std::uint32_t capacity);

  std::uint32_t size() const { return n_; }
  std::uint32_t capacity() const { return capacity_; }

  std::uint32_t Degree(NodeId i) const { return words_[Block(i)]; }
  // Node i's neighbours (Degree(i) ids); valid until the list is modified.
  std::span<const NodeId> Neighbors(NodeId i) const {
    const std::size_t b = Block(i);
    return {words_.data() + b + 1, words_[b]};
  }
  // Replaces node i's list by `ids` (size <= capacity(); not checked for
  // duplicates or self-loops — builders guarantee that).
  void Set(NodeId i, std::span<const NodeId> ids);
  // Appends `id` to node i's list; returns false (and changes nothing) if full.
  bool Append(NodeId i, NodeId id) {
    const std::size_t b = Block(i);
    const std::uint32_t d = words_[b];
    if (d >= capacity_) return false;
    words_[b + 1 + d] = id;
    words_[b] = d + 1;
    return true;
  }
  // Whether `id` is in node i's list (linear scan of <= capacity ids).
  bool Contains(NodeId i, NodeId id) const;
  // Replaces the entry at `pos` (< Degree(i)) of node i's list by `id`.
  void Replace(NodeId i, std::uint32_t pos, NodeId id) { words_[Block(i) + 1 + pos] = id; }

  // Re-lays the array out with `new_capacity` slots per node, in place, and
  // releases the freed memory. Requires every degree <= new_capacity <= capacity().
  // Used after a build to drop the slack slots (e.g. 83 -> 64 per node).
  void ShrinkCapacity(std::uint32_t new_capacity);

  // Total edges (sum of degrees) and bytes held by the array.
  std::uint64_t NumEdges() const;
  std::size_t MemoryBytes() const { return words_.capacity() * sizeof(std::uint32_t); }

 private:
  std::size_t Block(NodeId i) const { return static_cast<std::size_t>(i) * (capacity_ + 1); }

  std::vector<std::uint32_t> words_;  // n_ blocks of [degree, capacity_ ids]
  std::uint32_t n_ = 0;
  std::uint32_t capacity_ = 0;
};

}  // namespace strata::graph

#endif  // STRATA_GRAPH_ADJACENCY_H_
