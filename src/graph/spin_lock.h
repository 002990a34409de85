// SpinLock: a one-byte lock for per-node neighbour lists during a parallel build.
//
// One lock per node (n bytes) keeps contention negligible: two threads only
// meet when they touch the same node's list, and hold it for a copy or an
// append (never across distance computations). Spins with a CPU pause, then
// yields, so a holder preempted on an oversubscribed machine is not starved.
// Satisfies BasicLockable (works with std::lock_guard).
#ifndef STRATA_GRAPH_SPIN_LOCK_H_
#define STRATA_GRAPH_SPIN_LOCK_H_

#include <atomic>
#include <thread>

namespace strata::graph {

class SpinLock {
 public:
  SpinLock() = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void lock() {
    for (int spins = 0;; ++spins) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < 64) {
          Pause();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static void Pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::atomic<bool> locked_{false};
};

}  // namespace strata::graph

#endif  // STRATA_GRAPH_SPIN_LOCK_H_
