// Test-only helpers for graph_test: seeded synthetic data and exact
// brute-force references.
#ifndef STRATA_GRAPH_TEST_DATA_H_
#define STRATA_GRAPH_TEST_DATA_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/adjacency.h"
#include "graph/neighbor.h"
#include "graph/vector_view.h"

namespace strata::graph::testing {

// n rows of dimension d (size n * d) from a Gaussian mixture: `clusters`
// centres drawn from N(0, center_scale^2 I), each row = a random centre +
// N(0, I). Deterministic for a seed.
std::vector<float> GaussianMixture(std::size_t n, std::size_t d, std::size_t clusters,
                                   std::uint64_t seed, float center_scale = 3.0f);

// Scales every row (size n * d) to unit L2 norm.
void NormalizeRows(std::vector<float>* rows, std::size_t d);

// Exact k nearest rows of `base` for each query (size nq * d) by the view's
// metric, ties by lower id. Returns nq * k ids, row-major.
std::vector<NodeId> BruteForceKnn(const VectorView& base, std::span<const float> queries,
                                  std::size_t k);

// Mean recall@k (|found ∩ truth| / k) of GreedySearch from `entry` with list
// size L over the queries, against `truth` from BruteForceKnn.
double SearchRecall(const VectorView& base, const FlatAdjacency& graph, NodeId entry,
                    std::span<const float> queries, const std::vector<NodeId>& truth,
                    std::size_t k, std::uint32_t list_size);

}  // namespace strata::graph::testing

#endif  // STRATA_GRAPH_TEST_DATA_H_
