// ParallelFor: static work splitting over a fixed number of std::threads.
//
// Strata's hot loops (ground truth, k-means assignment, encoding, graph build)
// are embarrassingly parallel over rows; this is the one helper they share.
// Each worker takes chunks of `grain` items from an atomic counter (dynamic
// scheduling), so uneven rows balance out.
#ifndef STRATA_BASE_PARALLEL_H_
#define STRATA_BASE_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace strata {

// Number of threads to use when the caller passes 0: the hardware concurrency.
inline unsigned DefaultThreads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

// Calls fn(begin, end, thread_index) over disjoint chunks covering [0, n).
// Runs inline when threads <= 1. `fn` must not throw.
template <typename Fn>
void ParallelForChunks(std::size_t n, unsigned threads, std::size_t grain, Fn&& fn) {
  if (n == 0) return;
  if (threads == 0) threads = DefaultThreads();
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks = (n + grain - 1) / grain;
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, chunks));
  if (threads <= 1) {
    fn(std::size_t{0}, n, 0u);
    return;
  }
  std::atomic<std::size_t> next{0};
  auto worker = [&](unsigned t) {
    for (;;) {
      const std::size_t b = next.fetch_add(grain, std::memory_order_relaxed);
      if (b >= n) break;
      fn(b, std::min(n, b + grain), t);
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
}

// Calls fn(i, thread_index) for every i in [0, n).
template <typename Fn>
void ParallelFor(std::size_t n, unsigned threads, Fn&& fn, std::size_t grain = 64) {
  ParallelForChunks(n, threads, grain, [&](std::size_t b, std::size_t e, unsigned t) {
    for (std::size_t i = b; i < e; ++i) fn(i, t);
  });
}

}  // namespace strata

#endif  // STRATA_BASE_PARALLEL_H_
