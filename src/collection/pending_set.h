// The in-RAM copy of the pending list: vectors written since the current
// index version was built, searched by exact scan beside the SSD index (the
// "pending delta" of DefraDB's DISKANN vector index, caught up from the
// durable list in RocksDB at open).
//
// Multi-version: each entry carries the write sequence that inserted it and
// the one that killed it (replaced or deleted), so a search at snapshot S
// sees exactly the entries with insert_seq <= S < dead_seq without taking a
// lock. Append-only within one index version; a merge starts a new set.
//
// Thread-safety: one writer (the collection's write path, serialised by its
// mutex) calls Append and MarkDead; any number of readers call Scan and
// accessors concurrently.
#ifndef STRATA_COLLECTION_PENDING_SET_H_
#define STRATA_COLLECTION_PENDING_SET_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "kernels/distance.h"
#include "strata/distance.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::collection {

// Which user ids a search may return (a payload filter's test); may be
// costly, so callers ask it as late as they can.
using IdPredicate = std::function<bool(VectorId)>;

inline constexpr std::uint64_t kNeverDead = std::numeric_limits<std::uint64_t>::max();

class PendingSet {
 public:
  // dim floats per vector; distances by `metric` (exact, float32).
  static Result<std::unique_ptr<PendingSet>> Create(std::uint32_t dim, Metric metric);
  ~PendingSet();

  // Appends a vector (dim floats) written by write `seq`; returns its
  // position. InvalidArgument past the capacity (kMaxEntries).
  Result<std::uint32_t> Append(VectorId id, const float* vector, std::uint64_t seq);
  // Marks entry `pos` dead as of write `seq`.
  void MarkDead(std::uint32_t pos, std::uint64_t seq);

  // The up to `k` nearest entries at positions >= `from` live at snapshot
  // `snapshot` (and, with `accept`, whose id it accepts), ascending by
  // distance: (distance, id). `accept` is asked only about entries near
  // enough to enter the result.
  void Scan(const float* query, std::uint64_t snapshot, std::size_t k,
            std::vector<std::pair<float, VectorId>>* out, std::uint32_t from = 0,
            const IdPredicate* accept = nullptr) const;

  std::uint32_t size() const { return size_.load(std::memory_order_acquire); }
  VectorId id(std::uint32_t pos) const;
  std::uint64_t insert_seq(std::uint32_t pos) const;
  std::uint64_t dead_seq(std::uint32_t pos) const;
  const float* vector(std::uint32_t pos) const;
  std::uint32_t dim() const { return dim_; }
  // Bytes held (vectors and per-entry state of allocated chunks).
  std::size_t memory_bytes() const { return MemoryBytesWith(0); }
  // Bytes held after `more` further appends.
  std::size_t MemoryBytesWith(std::uint64_t more) const;

  static constexpr std::uint32_t kChunkEntries = 1024;
  static constexpr std::uint32_t kMaxChunks = 1u << 16;  // 64M entries

 private:
  struct Chunk;
  PendingSet(std::uint32_t dim, kernels::ErasedDistanceFn distance);

  std::uint32_t dim_;
  kernels::ErasedDistanceFn distance_;
  // Fixed table of chunk pointers: never reallocated, so readers index it
  // without a lock; entries below size_ are published by its release store.
  std::unique_ptr<Chunk*[]> chunks_;
  std::atomic<std::uint32_t> size_{0};
  std::uint32_t chunks_allocated_ = 0;  // writer only
};

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_PENDING_SET_H_
