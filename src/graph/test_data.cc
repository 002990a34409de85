#include "graph/test_data.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "graph/greedy_search.h"

namespace strata::graph::testing {

std::vector<float> GaussianMixture(std::size_t n, std::size_t d, std::size_t clusters,
                                   std::uint64_t seed, float center_scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Centres depend on the seed's high half only, so base and query sets drawn
  // with seeds differing in the low bits share the same mixture.
  std::mt19937_64 centre_rng(seed >> 32);
  std::vector<float> centres(clusters * d);
  for (float& c : centres) c = normal(centre_rng) * center_scale;
  std::vector<float> rows(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = rng() % clusters;
    for (std::size_t j = 0; j < d; ++j) rows[i * d + j] = centres[c * d + j] + normal(rng);
  }
  return rows;
}

void NormalizeRows(std::vector<float>* rows, std::size_t d) {
  for (std::size_t i = 0; i < rows->size() / d; ++i) {
    float* r = rows->data() + i * d;
    double s = 0.0;
    for (std::size_t j = 0; j < d; ++j) s += static_cast<double>(r[j]) * r[j];
    const auto inv = static_cast<float>(1.0 / std::sqrt(s));
    for (std::size_t j = 0; j < d; ++j) r[j] *= inv;
  }
}

std::vector<NodeId> BruteForceKnn(const VectorView& base, std::span<const float> queries,
                                  std::size_t k) {
  const std::size_t nq = queries.size() / base.dim();
  std::vector<NodeId> out(nq * k);
  std::vector<Neighbor> all(base.size());
  for (std::size_t q = 0; q < nq; ++q) {
    const float* qv = queries.data() + q * base.dim();
    for (NodeId i = 0; i < base.size(); ++i) all[i] = {i, base.DistanceTo(qv, i)};
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(k), all.end(),
                      NeighborLess);
    for (std::size_t j = 0; j < k; ++j) out[q * k + j] = all[j].id;
  }
  return out;
}

double SearchRecall(const VectorView& base, const FlatAdjacency& graph, NodeId entry,
                    std::span<const float> queries, const std::vector<NodeId>& truth,
                    std::size_t k, std::uint32_t list_size) {
  const std::size_t nq = queries.size() / base.dim();
  GraphSearcher searcher(base, graph);
  std::vector<NodeId> ids;
  const NodeId entries[1] = {entry};
  std::size_t hits = 0;
  for (std::size_t q = 0; q < nq; ++q) {
    searcher.Search(queries.data() + q * base.dim(), entries, list_size);
    searcher.TopK(static_cast<std::uint32_t>(k), &ids, nullptr);
    const auto t0 = truth.begin() + static_cast<std::ptrdiff_t>(q * k);
    for (const NodeId id : ids) hits += std::count(t0, t0 + static_cast<std::ptrdiff_t>(k), id);
  }
  return static_cast<double>(hits) / static_cast<double>(nq * k);
}

}  // namespace strata::graph::testing
