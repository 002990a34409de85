// ScopedSingleThreadedBlas: runs OpenBLAS single-threaded for a scope.
//
// The quantizers parallelise over rows with ParallelFor and call sgemm from
// every worker on a cache-sized tile. OpenBLAS (pthread build) would otherwise
// start its own thread pool inside each call: threads x OpenBLAS threads
// runnable threads on the same cores (oversubscription), and concurrent
// multi-threaded calls serialise on OpenBLAS's pool lock. One worker level
// owning the cores is both faster and deterministic (single-threaded sgemm
// results do not depend on the thread count).
#ifndef STRATA_QUANT_PQ_BLAS_THREADS_H_
#define STRATA_QUANT_PQ_BLAS_THREADS_H_

namespace strata::quant {

// While at least one guard is alive, OpenBLAS uses one thread; the setting in
// force before the first guard is restored when the last one is destroyed.
// Guards may nest and may live on different threads (a process-wide counter
// under a mutex). The setting is process-global: other code calling OpenBLAS
// at the same time runs single-threaded too (slower, never wrong).
class ScopedSingleThreadedBlas {
 public:
  ScopedSingleThreadedBlas();
  ~ScopedSingleThreadedBlas();
  ScopedSingleThreadedBlas(const ScopedSingleThreadedBlas&) = delete;
  ScopedSingleThreadedBlas& operator=(const ScopedSingleThreadedBlas&) = delete;
};

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_BLAS_THREADS_H_
