// A hot-page cache for the decoupled layout's edge pages, shared by every
// search thread of an index: the walk's approach phase reads the same few
// pages near the entry points for every query, and edge pages hold only
// adjacency, so a cache of a given size holds many more lists than a cache
// of node records would (NAVIS-cache; Sun et al., "NAVIS: Concurrent Search
// and Update with Low Position-Seeking Overhead in On-SSD Graph-Based Vector
// Search").
//
// Policies (EdgeCachePolicy):
//   - navis: pages read from SSD enter a small FIFO admission window (1/8 of
//     the capacity); only a page hit again while in the window is promoted to
//     the main region, whose victims are chosen at random. One-off pages
//     (the far end of each walk) pass through the window without displacing
//     the hot set;
//   - lru, clock (FIFO with second chance), lfu (least frequently used;
//     counts halve every 8x-capacity accesses): every page read is admitted,
//     the comparison policies of NAVIS's Fig. 17b.
// The cache holds verified, clean pages only (searches never write); a
// page's bytes are copied out under the lock, so a later eviction cannot
// tear a reader's copy.
#ifndef STRATA_SEARCH_EDGE_PAGE_CACHE_H_
#define STRATA_SEARCH_EDGE_PAGE_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <vector>

#include "format/sector_file.h"
#include "strata/index.h"

namespace strata::search {

class EdgePageCache {
 public:
  // `capacity` pages (>= 8).
  EdgePageCache(std::size_t capacity, EdgeCachePolicy policy, std::uint64_t seed = 1);

  // Copies page `page` into `out` (kSector bytes) if cached; counts the hit
  // or miss.
  bool Lookup(std::uint32_t page, std::byte* out);
  // A page just read from SSD (and verified): the policy decides whether to
  // keep it. `heat` > 0: a page an in-place update wrote in place of cached
  // ones (their lists moved to it), admitted as they were: LFU starts it at
  // that count, navis skips the admission window.
  void Offer(std::uint32_t page, const std::byte* sector, std::uint32_t heat = 0);
  // 0 when `page` is not cached, else how hot it is (its LFU count; 1 under
  // the other policies), for an updater moving its lists (Offer's heat).
  std::uint32_t Heat(std::uint32_t page) const;
  // An in-place updater about to rewrite cached `page` whole (its lists
  // changed): copies it into `out` (kSector bytes) and returns its heat, as
  // Heat; 0, and nothing copied, when it is not cached. Not a hit: neither
  // the counters nor the policy's order change.
  std::uint32_t Peek(std::uint32_t page, std::byte* out) const;
  // Drops `page` if cached: an in-place updater is about to rewrite it (a
  // page is reused only once no search that read its old content runs, so
  // no stale copy is offered after this).
  void Invalidate(std::uint32_t page);

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const;
  std::uint64_t hits() const;
  std::uint64_t misses() const;
  // The frames and their bookkeeping (the page table adds 4 bytes per page
  // of the edge file seen).
  std::size_t MemoryBytes() const { return capacity_ * (format::kSector + 64); }

 private:
  static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
  // What a frame holds. Pages are found through a page-indexed table, not
  // a hash map: a lookup is one load, and a miss under LFU (eight sampled
  // victims) costs no hashing at all.
  struct Frame {
    std::uint32_t page = kNone;  // kNone: free
    bool in_window = false;      // navis: still on probation
    bool referenced = false;     // clock
    std::uint32_t count = 0;     // lfu
    std::uint32_t resident_at = kNone;  // index in resident_
    std::list<std::uint32_t>::iterator order;  // lru / clock / navis window position
  };
  std::uint32_t FrameOf(std::uint32_t page) const {
    return page < frame_of_.size() ? frame_of_[page] : kNone;
  }
  // Removes frame `f`'s page and returns the frame to the free list.
  void Evict(std::uint32_t f);
  // Evicts per policy until a frame is free for the main region (or, for
  // navis, the window) and returns it.
  std::uint32_t FreeFrame(bool for_window);
  std::uint32_t RandomResident();
  void AddResident(std::uint32_t f);
  void RemoveResident(std::uint32_t f);

  const std::size_t capacity_;
  const EdgeCachePolicy policy_;
  const std::size_t window_capacity_;  // navis only
  mutable std::mutex mu_;
  std::vector<std::byte> bytes_;  // capacity_ * kSector
  std::vector<Frame> frames_;     // capacity_
  std::vector<std::uint32_t> free_frames_;
  std::vector<std::uint32_t> frame_of_;  // page -> frame or kNone; grows with the pages seen
  std::size_t size_ = 0;
  // Lists of frames.
  std::list<std::uint32_t> order_;   // lru: most recent first; clock: the ring
  std::list<std::uint32_t>::iterator hand_;  // clock
  std::list<std::uint32_t> window_;  // navis: newest first
  // Frames of the main region (every page but navis's window), for random
  // and sampled victims.
  std::vector<std::uint32_t> resident_;
  std::uint64_t accesses_since_decay_ = 0;
  std::uint64_t rng_;
  std::uint64_t hits_ = 0, misses_ = 0;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_EDGE_PAGE_CACHE_H_
