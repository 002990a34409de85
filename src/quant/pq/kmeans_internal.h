// Internal k-means steps shared by flat and hierarchical training (not a
// public header).
#ifndef STRATA_QUANT_PQ_KMEANS_INTERNAL_H_
#define STRATA_QUANT_PQ_KMEANS_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::quant::internal {

// Sets centroid c (row c of `centroids`, k * d) to the mean of the rows of x
// (n * d) labelled c; counts[c] must be the number of such rows. Clusters
// without rows keep their centroid. Sums run per cluster in row order, in
// double: bit-identical for any `threads`.
void UpdateCentroids(const float* x, std::size_t n, std::size_t d, std::size_t k,
                     const std::uint32_t* labels, const std::vector<std::size_t>& counts,
                     unsigned threads, float* centroids);

}  // namespace strata::quant::internal

#endif  // STRATA_QUANT_PQ_KMEANS_INTERNAL_H_
