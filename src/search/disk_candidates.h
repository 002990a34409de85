// DiskCandidates: the candidate list of the SSD graph search. Like
// graph::CandidateList it keeps the best L candidates sorted by (PQ distance,
// id), but each entry has three states instead of two, because a read is in
// flight between choosing a node and expanding it: kNew (not chosen yet),
// kIssued (its page is being or has been read) and kDone (expanded). The
// pipelined search issues reads for some nodes while others wait, and page
// search expands nodes that were never chosen, so both transitions are needed.
// Not thread-safe; one per search thread.
#ifndef STRATA_SEARCH_DISK_CANDIDATES_H_
#define STRATA_SEARCH_DISK_CANDIDATES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/neighbor.h"

namespace strata::search {

class DiskCandidates {
 public:
  enum State : std::uint8_t { kNew = 0, kIssued = 1, kDone = 2 };
  struct Entry {
    std::uint32_t id;
    float distance;
    State state;
  };

  // Empties the list and sets its capacity (>= 1).
  void Reset(std::size_t capacity) {
    capacity_ = capacity;
    entries_.resize(capacity + 1);  // one spare slot simplifies insertion
    size_ = 0;
    first_new_ = 0;
  }

  // Inserts (id, distance) as kNew unless the list is full and it is not
  // better than the worst entry; the caller guarantees `id` is not in the list.
  // Returns whether it was inserted.
  bool Insert(std::uint32_t id, float distance) {
    const std::ptrdiff_t pos =
        graph::InsertBoundedSorted(entries_, &size_, capacity_, Entry{id, distance, kNew}, Less);
    if (pos < 0) return false;
    if (static_cast<std::size_t>(pos) < first_new_) first_new_ = static_cast<std::size_t>(pos);
    return true;
  }

  // Position of the nearest kNew entry (size() if none): the frontier of the
  // search; PipeANN's "marker" for telling the approach phase from the
  // converge phase.
  std::size_t FirstNew() {
    while (first_new_ < size_ && entries_[first_new_].state != kNew) ++first_new_;
    return first_new_;
  }
  bool HasNew() { return FirstNew() < size_; }

  // Marks the nearest kNew entry kIssued and returns it. Requires HasNew().
  Entry TakeNew() {
    Entry& e = entries_[FirstNew()];
    e.state = kIssued;
    return e;
  }

  // Sets the state of `id` if it is in the list; returns whether it was.
  bool SetState(std::uint32_t id, State state) {
    for (std::size_t i = 0; i < size_; ++i) {
      if (entries_[i].id == id) {
        entries_[i].state = state;
        return true;
      }
    }
    return false;
  }

  // Whether a candidate at `distance` would still be kept (it is not worse
  // than the worst entry of a full list).
  bool WouldKeep(float distance) const {
    return size_ < capacity_ || distance <= entries_[size_ - 1].distance;
  }

  std::size_t size() const { return size_; }
  const Entry& operator[](std::size_t i) const { return entries_[i]; }

 private:
  static bool Less(const Entry& a, const Entry& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.id < b.id);
  }

  std::vector<Entry> entries_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  std::size_t first_new_ = 0;  // lower bound of the nearest kNew entry
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_DISK_CANDIDATES_H_
