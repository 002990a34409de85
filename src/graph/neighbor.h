// Neighbor and CandidateList: the sorted, bounded candidate list of greedy
// graph search (DiskANN's NeighborPriorityQueue).
#ifndef STRATA_GRAPH_NEIGHBOR_H_
#define STRATA_GRAPH_NEIGHBOR_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace strata::graph {

// Node id inside one in-memory graph (a build shard); kInvalidNode means none.
using NodeId = std::uint32_t;
inline constexpr NodeId kInvalidNode = std::numeric_limits<NodeId>::max();

// A node and its distance to some reference point (query or node).
struct Neighbor {
  NodeId id = kInvalidNode;
  float distance = 0.0f;
};

// Strict order by distance, then id, so sorts are deterministic under ties.
inline bool NeighborLess(const Neighbor& a, const Neighbor& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.id < b.id);
}

// Inserts `e` into the ascending array entries[0, *size) that keeps at most
// `capacity` entries (`entries` has capacity + 1 slots), unless it is full
// and `e` is not less than its last entry. Returns the position it took, or
// -1 if it was not inserted. The bounded sorted insert of every candidate
// list (graph build and search, SSD search).
template <typename Entry, typename Less>
std::ptrdiff_t InsertBoundedSorted(std::vector<Entry>& entries, std::size_t* size,
                                   std::size_t capacity, const Entry& e, Less less) {
  if (*size == capacity && !less(e, entries[*size - 1])) return -1;
  std::size_t lo = 0, hi = *size;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (less(entries[mid], e)) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  for (std::size_t i = *size; i > lo; --i) entries[i] = entries[i - 1];
  entries[lo] = e;
  if (*size < capacity) ++*size;
  return static_cast<std::ptrdiff_t>(lo);
}

// The best `capacity` candidates seen so far, sorted by (distance, id), each
// flagged expanded or not. Search repeatedly takes the nearest unexpanded
// candidate; the list tracks that position in O(1) amortised. Not
// thread-safe; one per searching thread.
class CandidateList {
 public:
  CandidateList() = default;

  // Empties the list and sets its capacity (>= 1).
  void Reset(std::size_t capacity) {
    capacity_ = capacity;
    entries_.resize(capacity + 1);  // one spare slot simplifies insertion
    size_ = 0;
    cursor_ = 0;
  }

  // Inserts (id, distance) unless the list is full and it is not better than
  // the worst entry. The caller guarantees `id` is not in the list (searches
  // filter through a VisitedSet). Returns whether it was inserted.
  bool Insert(NodeId id, float distance) {
    const std::ptrdiff_t pos =
        InsertBoundedSorted(entries_, &size_, capacity_, Entry{id, distance, false}, Less);
    if (pos < 0) return false;
    if (static_cast<std::size_t>(pos) < cursor_) cursor_ = static_cast<std::size_t>(pos);
    return true;
  }

  // Whether some entry is not yet expanded.
  bool HasUnexpanded() const { return cursor_ < size_; }

  // Marks the nearest unexpanded entry expanded and returns it. Requires HasUnexpanded().
  Neighbor ExpandNext() {
    Entry& e = entries_[cursor_];
    e.expanded = true;
    const Neighbor out{e.id, e.distance};
    while (cursor_ < size_ && entries_[cursor_].expanded) ++cursor_;
    return out;
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return capacity_; }
  // Entry i in ascending distance order (i < size()).
  Neighbor operator[](std::size_t i) const { return {entries_[i].id, entries_[i].distance}; }

 private:
  struct Entry {
    NodeId id;
    float distance;
    bool expanded;
  };
  static bool Less(const Entry& a, const Entry& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.id < b.id);
  }

  std::vector<Entry> entries_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t cursor_ = 0;  // index of the nearest unexpanded entry (== size_ if none)
};

}  // namespace strata::graph

#endif  // STRATA_GRAPH_NEIGHBOR_H_
