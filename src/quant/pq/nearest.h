// Nearest-centroid search under squared L2 via BLAS sgemm.
//
// ||x - c||^2 = ||x||^2 - 2 <x, c> + ||c||^2: the cross terms of a tile of
// rows against a block of centroids are one sgemm, and the arg-min over
// (||c||^2 - 2 <x, c>) is a cheap SIMD pass over the tile, so the cost is that
// of a matrix product. This is the assignment step of k-means, PQ encoding and
// IVF coarse assignment.
//
// Precision: the expansion loses relative precision when ||x|| is large
// compared to ||x - c|| (cancellation), so two centroids within ~1e-6 relative
// distance of each other may be ranked either way. The distances returned are
// always recomputed exactly (direct difference) for the chosen centroids.
// Ties in the expansion go to the lowest centroid index.
#ifndef STRATA_QUANT_PQ_NEAREST_H_
#define STRATA_QUANT_PQ_NEAREST_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/status.h"

namespace strata::quant {

// Squared L2 distance of two float vectors of length d (exact loop through
// the best available distance kernel).
float SquaredL2(const float* a, const float* b, std::size_t d);

// The same as a plain loop the compiler inlines: for PQ subspaces of a few
// dims, where an indirect (or out-of-line) call costs more than the loop.
inline float SquaredL2Short(const float* a, const float* b, std::size_t d) {
  float s = 0.f;
  for (std::size_t i = 0; i < d; ++i) {
    const float diff = a[i] - b[i];
    s += diff * diff;
  }
  return s;
}

// A set of k centroids (row-major k x d, borrowed; must outlive the searcher)
// with their squared norms precomputed. Immutable after construction:
// thread-safe for concurrent searches, each thread with its own Scratch.
class CentroidSearcher {
 public:
  // Rows handled per sgemm tile; callers splitting work should use multiples.
  static constexpr std::size_t kRowBlock = 128;
  // Centroids per sgemm tile (tile = kRowBlock x kCentroidBlock floats,
  // 512 KiB: stays in L2 between sgemm and the arg-min pass).
  static constexpr std::size_t kCentroidBlock = 1024;

  // Per-thread working memory; reusable across calls.
  struct Scratch {
    std::vector<float> tile;
    std::vector<float> best;
    std::vector<float> top_dist;
    std::vector<std::uint32_t> top_label;
  };

  // `centroids` has size k * d. k must be in [1, 2^32 - 1], d >= 1.
  CentroidSearcher(const float* centroids, std::size_t k, std::size_t d);

  std::size_t k() const { return k_; }
  std::size_t dim() const { return d_; }
  const float* centroids() const { return centroids_; }

  // Single-threaded: for each of `rows` rows x[r * ldx .. r * ldx + d), the
  // nearest centroid into labels[r] and, if `distances` is not null, its
  // exact squared distance into distances[r]. Any `rows` (tiled internally).
  // Calls sgemm: run under ScopedSingleThreadedBlas when called from several
  // threads.
  void Nearest(const float* x, std::size_t ldx, std::size_t rows, std::uint32_t* labels,
               float* distances, Scratch* scratch) const;

  // Single-threaded: the t nearest centroids of each row (1 <= t <= k),
  // labels/distances of size rows * t, each row's list ascending by exact
  // squared distance (ties by lower index).
  void TopK(const float* x, std::size_t ldx, std::size_t rows, std::size_t t,
            std::uint32_t* labels, float* distances, Scratch* scratch) const;

 private:
  void NearestTile(const float* x, std::size_t ldx, std::size_t rows, std::uint32_t* labels,
                   Scratch* scratch) const;
  void TopKTile(const float* x, std::size_t ldx, std::size_t rows, std::size_t t,
                std::uint32_t* labels, float* distances, Scratch* scratch) const;

  const float* centroids_;
  std::size_t k_;
  std::size_t d_;
  std::vector<float> norms_;  // ||c||^2, size k
};

// Multi-threaded nearest centroid for n rows of x (size n * d): labels (size
// n) and, if not null, exact squared distances (size n). `threads` = 0 uses
// all cores; OpenBLAS runs single-threaded meanwhile (ScopedSingleThreadedBlas).
// Deterministic: the result does not depend on `threads`.
// Fails with InvalidArgument on null pointers with n > 0, d == 0, k == 0 or
// k >= 2^32.
Status AssignNearest(const float* x, std::size_t n, std::size_t d, const float* centroids,
                     std::size_t k, std::uint32_t* labels, float* distances,
                     unsigned threads = 0);

// Multi-threaded t nearest centroids per row: labels and distances of size
// n * t, ascending per row. InvalidArgument also when t == 0 or t > k.
Status AssignTopK(const float* x, std::size_t n, std::size_t d, const float* centroids,
                  std::size_t k, std::size_t t, std::uint32_t* labels, float* distances,
                  unsigned threads = 0);

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_NEAREST_H_
