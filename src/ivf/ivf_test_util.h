// Clustered random data for the IVF unit tests.
#ifndef STRATA_IVF_IVF_TEST_UTIL_H_
#define STRATA_IVF_IVF_TEST_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace strata::ivf::testing {

// n rows of d floats around `blobs` Gaussian centres (row-major).
inline std::vector<float> ClusteredRows(std::size_t n, std::size_t d, std::size_t blobs,
                                        std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> centres(blobs * d);
  for (float& v : centres) v = 4.0f * g(rng);
  std::vector<float> rows(n * d);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t b = rng() % blobs;
    for (std::size_t j = 0; j < d; ++j) rows[i * d + j] = centres[b * d + j] + g(rng);
  }
  return rows;
}

inline float L2(const float* a, const float* b, std::size_t d) {
  float s = 0;
  for (std::size_t j = 0; j < d; ++j) s += (a[j] - b[j]) * (a[j] - b[j]);
  return s;
}

}  // namespace strata::ivf::testing

#endif  // STRATA_IVF_IVF_TEST_UTIL_H_
