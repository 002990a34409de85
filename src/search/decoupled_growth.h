// The state a decoupled graph layout (decoupled_search.h) needs to be
// searched while one writer changes it in place (NAVIS's out-of-place
// structural updates; Sun et al., "NAVIS: Concurrent Search and Update with
// Low Position-Seeking Overhead in On-SSD Graph-Based Vector Search"):
//
//   - vertices appended past the files' own: their PQ codes in a RAM arena
//     sized for `capacity` at creation (never reallocated, so a reader's
//     pointer stays valid), published by a count stored with release order
//     after the codes and the vertex's edge location are written. A search
//     reads the count once when it starts and ignores vertices above it, so
//     it never reads a code the writer has not finished;
//   - tombstones (one byte a vertex): a deleted vertex is still walked
//     through but never returned;
//   - the vector file's last sector, held in RAM while inserts fill it
//     (HoldTail): the writer may write it only once it is full, and a
//     search takes it from here (CopyTail) instead of reading the file;
//   - reader epochs (Fraser, "Practical lock-freedom", epoch-based
//     reclamation): a search announces the epoch it started in; an edge page
//     whose every list has moved elsewhere is reused only once no search that
//     may still hold its old location is running, so a reader never sees a
//     page rewritten under it.
// The indirection table itself stays DecoupledGraphData::where (sized for
// `capacity`), read and written as whole 8-byte entries
// (DecoupledGraphData::Location / SetLocation).
#ifndef STRATA_SEARCH_DECOUPLED_GROWTH_H_
#define STRATA_SEARCH_DECOUPLED_GROWTH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <span>

#include "format/sector_file.h"

#include "search/mem_graph.h"

#include "strata/result.h"

namespace strata::search {

class ReaderEpochs {
 public:
  static constexpr std::size_t kMaxReaders = 1024;
  ReaderEpochs();
  // A reader slot for one search context; Busy when every slot
  // is taken. Release gives it back.
  Result<std::uint32_t> Claim();
  void Release(std::uint32_t slot);
  // A search starts / ends on `slot`.
  void Enter(std::uint32_t slot);
  void Exit(std::uint32_t slot);
  // The writer retires what it has just unlinked: returns the epoch it was
  // retired in (later searches cannot reach it).
  std::uint64_t Retire();
  // The oldest epoch a running search entered in (UINT64_MAX when none
  // runs): what was retired in an epoch below it may be reused.
  std::uint64_t OldestActive() const;

 private:
  struct alignas(64) Slot {
    std::atomic<std::uint64_t> epoch{0};  // 0: idle
    std::atomic<bool> claimed{false};
  };
  std::atomic<std::uint64_t> global_{1};
  std::unique_ptr<Slot[]> slots_;
};

class DecoupledGrowth {
 public:
  // Vertices [0, base) are the files'; rows [0, base_rows) theirs (a
  // vertex >= base has row base_rows + (vertex - base)).
  DecoupledGrowth(std::uint32_t base, std::uint32_t base_rows, std::uint32_t capacity,
                  std::size_t code_size);

  std::uint32_t base() const { return base_; }
  std::uint32_t base_rows() const { return base_rows_; }
  std::uint32_t capacity() const { return capacity_; }
  // Vertices published (acquire: their codes and locations are visible).
  std::uint32_t count() const { return count_.load(std::memory_order_acquire); }
  // Writer: vertices below `count` are complete.
  void Publish(std::uint32_t count) { count_.store(count, std::memory_order_release); }

  // The code of appended vertex `v` (base <= v < capacity).
  const std::uint8_t* code(std::uint32_t v) const {
    return codes_.get() + static_cast<std::size_t>(v - base_) * code_size_;
  }
  std::uint8_t* mutable_code(std::uint32_t v) {
    return codes_.get() + static_cast<std::size_t>(v - base_) * code_size_;
  }

  bool deleted(std::uint32_t v) const { return deleted_[v].load(std::memory_order_acquire) != 0; }
  void MarkDeleted(std::uint32_t v) {
    if (deleted_[v].exchange(1, std::memory_order_acq_rel) == 0) {
      deleted_count_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  // Vertices marked deleted so far.
  std::uint32_t deleted_count() const { return deleted_count_.load(std::memory_order_relaxed); }
  // Whether searches leave deleted vertices out of their results (the
  // default). A caller that decides what is live itself, through the
  // search's IdFilter (the collection, whose snapshots see a delete only
  // from its sequence on), turns this off; inserts never link to a deleted
  // vertex either way.
  bool search_hides_deleted() const { return hide_deleted_; }
  void set_search_hides_deleted(bool hide) { hide_deleted_ = hide; }

  // The entrance graph when inserts have extended it (null: the index's own
  // MemGraph). Replaced whole by the writer; a search takes it once.
  std::shared_ptr<const MemGraph> entrance() const {
    std::lock_guard<std::mutex> lock(entrance_mu_);
    return entrance_;
  }
  void set_entrance(std::shared_ptr<const MemGraph> graph) {
    std::lock_guard<std::mutex> lock(entrance_mu_);
    entrance_ = std::move(graph);
  }

  // Writer: `sector` (whole, sealed) is the vector file's last one, as
  // searches must see it; it may not be in the file yet. Held before any
  // vertex in it is published, and replaced only once the file has every
  // sector before the new one (so a search that misses here finds the
  // sector it wants complete in the file).
  void HoldTail(std::uint64_t sector, std::span<const std::byte, format::kSector> bytes) {
    std::lock_guard<std::mutex> lock(tail_mu_);
    std::memcpy(tail_bytes_.get(), bytes.data(), format::kSector);
    tail_sector_.store(sector, std::memory_order_release);
  }
  // The sector held (0: none).
  std::uint64_t held_tail() const { return tail_sector_.load(std::memory_order_acquire); }
  // Copies the held sector into `out` when it is `sector`.
  bool CopyTail(std::uint64_t sector, std::byte* out) const {
    if (tail_sector_.load(std::memory_order_acquire) != sector) return false;
    std::lock_guard<std::mutex> lock(tail_mu_);
    if (tail_sector_.load(std::memory_order_relaxed) != sector) return false;
    std::memcpy(out, tail_bytes_.get(), format::kSector);
    return true;
  }

  ReaderEpochs& epochs() { return epochs_; }
  std::size_t MemoryBytes() const {
    return static_cast<std::size_t>(capacity_ - base_) * code_size_ + capacity_ +
           ReaderEpochs::kMaxReaders * 64 + format::kSector;
  }

 private:
  std::uint32_t base_, base_rows_, capacity_;
  std::size_t code_size_;
  std::atomic<std::uint32_t> count_;
  std::unique_ptr<std::uint8_t[]> codes_;
  std::unique_ptr<std::atomic<std::uint8_t>[]> deleted_;
  std::atomic<std::uint32_t> deleted_count_{0};
  bool hide_deleted_ = true;  // set before searches exist
  mutable std::mutex tail_mu_;
  std::atomic<std::uint64_t> tail_sector_{0};  // 0 (the file's header): none held
  std::unique_ptr<std::byte[]> tail_bytes_ = std::make_unique<std::byte[]>(format::kSector);
  mutable std::mutex entrance_mu_;
  std::shared_ptr<const MemGraph> entrance_;
  ReaderEpochs epochs_;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_DECOUPLED_GROWTH_H_
