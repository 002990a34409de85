// Test helpers for the k-means / PQ tests: deterministic synthetic data and
// brute-force references. Test-only (linked into quant_pq_test).
#ifndef STRATA_QUANT_PQ_PQ_TEST_UTIL_H_
#define STRATA_QUANT_PQ_PQ_TEST_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "base/random.h"

namespace strata::quant::testing {

// Standard normal via Box-Muller on the deterministic Xoshiro256.
inline float Gaussian(Xoshiro256& rng) {
  double u1 = rng.Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  const double u2 = rng.Uniform();
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

// n x d iid N(0, 1) (times `scale`) plus `offset` on every coordinate.
inline std::vector<float> RandomData(std::size_t n, std::size_t d, std::uint64_t seed,
                                     float scale = 1.0f, float offset = 0.0f) {
  Xoshiro256 rng(seed);
  std::vector<float> x(n * d);
  for (float& v : x) v = offset + scale * Gaussian(rng);
  return x;
}

// Clustered data with low-dimensional latent structure, the same recipe as
// /work/shared/bench-data/gen_synth.py: `clusters` centres in a `latent`-dim
// space (N(0, 4)), per-cluster spread U(0.4, 1.2), Zipf-like cluster sizes,
// mapped to d dims by a random latent x d matrix, plus N(0, 0.15^2) noise.
// Queries come from the same distribution: call twice with one generator
// seed (`structure_seed`) and different `sample_seed`s.
inline std::vector<float> ClusteredData(std::size_t n, std::size_t d, std::size_t clusters,
                                        std::size_t latent, std::uint64_t structure_seed,
                                        std::uint64_t sample_seed) {
  Xoshiro256 srng(structure_seed);
  std::vector<float> a(latent * d), centres(clusters * latent), sig(clusters), cdf(clusters);
  for (float& v : a) v = Gaussian(srng) / std::sqrt(static_cast<float>(latent));
  for (float& v : centres) v = 2.0f * Gaussian(srng);
  double total = 0;
  for (std::size_t c = 0; c < clusters; ++c) {
    sig[c] = 0.4f + 0.8f * static_cast<float>(srng.Uniform());
    total += 1.0 / std::pow(static_cast<double>(c + 1), 0.6);
    cdf[c] = static_cast<float>(total);
  }
  Xoshiro256 rng(sample_seed);
  std::vector<float> x(n * d, 0.0f), z(latent);
  for (std::size_t i = 0; i < n; ++i) {
    const float u = static_cast<float>(rng.Uniform() * total);
    const std::size_t c = std::min<std::size_t>(
        clusters - 1, static_cast<std::size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) -
                                               cdf.begin()));
    for (std::size_t l = 0; l < latent; ++l) z[l] = centres[c * latent + l] + sig[c] * Gaussian(rng);
    float* row = x.data() + i * d;
    for (std::size_t l = 0; l < latent; ++l) {
      for (std::size_t j = 0; j < d; ++j) row[j] += z[l] * a[l * d + j];
    }
    for (std::size_t j = 0; j < d; ++j) row[j] += 0.15f * Gaussian(rng);
  }
  return x;
}

inline double ExactL2(const float* a, const float* b, std::size_t d) {
  double s = 0;
  for (std::size_t i = 0; i < d; ++i) {
    const double diff = static_cast<double>(a[i]) - b[i];
    s += diff * diff;
  }
  return s;
}

inline double ExactIp(const float* a, const float* b, std::size_t d) {
  double s = 0;
  for (std::size_t i = 0; i < d; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Indices of the k smallest values (ties by index), ascending.
template <typename T>
std::vector<std::size_t> SmallestK(const std::vector<T>& values, std::size_t k) {
  std::vector<std::size_t> idx(values.size());
  std::iota(idx.begin(), idx.end(), std::size_t{0});
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(k), idx.end(),
                    [&](std::size_t a, std::size_t b) {
                      return values[a] < values[b] || (values[a] == values[b] && a < b);
                    });
  idx.resize(k);
  return idx;
}

}  // namespace strata::quant::testing

#endif  // STRATA_QUANT_PQ_PQ_TEST_UTIL_H_
