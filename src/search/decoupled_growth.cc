#include "search/decoupled_growth.h"

#include <algorithm>
#include <limits>
#include <string>

namespace strata::search {

ReaderEpochs::ReaderEpochs() : slots_(new Slot[kMaxReaders]) {}

Result<std::uint32_t> ReaderEpochs::Claim() {
  for (std::uint32_t i = 0; i < kMaxReaders; ++i) {
    bool expected = false;
    if (slots_[i].claimed.compare_exchange_strong(expected, true)) return i;
  }
  return Status::Busy("more than " + std::to_string(kMaxReaders) +
                                   " searchers over one growing decoupled graph");
}

void ReaderEpochs::Release(std::uint32_t slot) {
  slots_[slot].epoch.store(0);
  slots_[slot].claimed.store(false);
}

// Sequentially consistent throughout: the writer unlinks (its stores to the
// indirection table), retires, then reads the slots; a reader stores its
// slot, then reads the table. In the single total order either the writer
// sees the reader's epoch, or the reader sees the unlinked table.
void ReaderEpochs::Enter(std::uint32_t slot) { slots_[slot].epoch.store(global_.load()); }

void ReaderEpochs::Exit(std::uint32_t slot) { slots_[slot].epoch.store(0); }

std::uint64_t ReaderEpochs::Retire() { return global_.fetch_add(1); }

std::uint64_t ReaderEpochs::OldestActive() const {
  std::uint64_t oldest = std::numeric_limits<std::uint64_t>::max();
  for (std::size_t i = 0; i < kMaxReaders; ++i) {
    const std::uint64_t e = slots_[i].epoch.load();
    if (e != 0) oldest = std::min(oldest, e);
  }
  return oldest;
}

DecoupledGrowth::DecoupledGrowth(std::uint32_t base, std::uint32_t base_rows,
                                 std::uint32_t capacity, std::size_t code_size)
    : base_(base),
      base_rows_(base_rows),
      capacity_(std::max(base, capacity)),
      code_size_(code_size),
      count_(base),
      codes_(new std::uint8_t[static_cast<std::size_t>(capacity_ - base_) * code_size + 1]()),
      deleted_(new std::atomic<std::uint8_t>[capacity_]) {
  for (std::uint32_t v = 0; v < capacity_; ++v) deleted_[v].store(0, std::memory_order_relaxed);
}

}  // namespace strata::search
