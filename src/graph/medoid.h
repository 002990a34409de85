// The Vamana entry point: the row nearest the mean of all rows.
//
// DiskANN's calculate_medoid — not a true medoid (that would cost O(n^2)),
// but the point nearest the centroid, which every greedy search starts from.
#ifndef STRATA_GRAPH_MEDOID_H_
#define STRATA_GRAPH_MEDOID_H_

#include <cstdint>
#include <vector>

#include "graph/neighbor.h"
#include "graph/vector_view.h"

namespace strata::graph {

// The mean of all rows (dim() floats), accumulated in double in fixed blocks
// of rows so the result is bit-identical for any thread count. Empty for an
// empty view. `num_threads` 0 = all hardware threads.
std::vector<float> ComputeCentroid(const VectorView& vectors, std::uint32_t num_threads);

// The row with the smallest squared L2 distance to the centroid (lowest id on
// ties), whatever the view's metric — as in DiskANN. kInvalidNode for an empty view.
NodeId ComputeMedoid(const VectorView& vectors, std::uint32_t num_threads);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_MEDOID_H_
