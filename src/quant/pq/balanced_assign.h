// Capacitated (balanced) nearest-centroid assignment.
//
// IVF posting lists should not exceed a size bound (one list is read per
// probe; a giant list costs a probe many pages). This assigns every row to a
// centroid such that no centroid receives more than `max_cluster_size` rows,
// staying as close to nearest-centroid assignment as possible:
//
// 1. Each row ranks its `candidates` nearest centroids (sgemm, nearest.h).
// 2. Deferred acceptance (Gale-Shapley with rows proposing): every unplaced
//    row proposes to its next candidate; each centroid keeps the
//    max_cluster_size closest proposers it has seen and rejects the rest. The
//    result is stable: no row and centroid both prefer each other to what
//    they got. With an unbounded cap it is exactly nearest-centroid.
// 3. Rows rejected by all their candidates go, in row order, to the nearest
//    centroid that still has room (exact scan over all k).
//
// Deterministic (ties broken by row index, then centroid index) and
// independent of `threads`.
#ifndef STRATA_QUANT_PQ_BALANCED_ASSIGN_H_
#define STRATA_QUANT_PQ_BALANCED_ASSIGN_H_

#include <cstddef>
#include <cstdint>

#include "strata/status.h"

namespace strata::quant {

// Assigns the n rows of x (size n * d) to the k centroids (size k * d) with at
// most `max_cluster_size` rows per centroid. labels (size n) get the centroid,
// distances (size n, may be null) the exact squared L2 to it. `candidates` is
// clamped to [1, k]; more candidates give closer assignments, cost
// n * candidates * 8 bytes of memory.
// InvalidArgument if k * max_cluster_size < n, on null pointers (with n > 0),
// d == 0, k == 0 or k >= 2^32.
Status AssignBalanced(const float* x, std::size_t n, std::size_t d, const float* centroids,
                      std::size_t k, std::size_t max_cluster_size, std::uint32_t* labels,
                      float* distances, unsigned threads = 0, std::size_t candidates = 8);

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_BALANCED_ASSIGN_H_
