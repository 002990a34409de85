#include "quant/pq/sample.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "base/random.h"

namespace strata::quant {

std::size_t SampleRowCount(std::size_t n, std::size_t d, std::size_t max_bytes,
                           std::size_t max_rows) {
  std::size_t m = n;
  if (max_bytes > 0 && d > 0) m = std::min(m, max_bytes / (d * sizeof(float)));
  if (max_rows > 0) m = std::min(m, max_rows);
  return m;
}

std::vector<std::size_t> SampleRows(std::size_t n, std::size_t m, std::uint64_t seed) {
  std::vector<std::size_t> rows;
  if (m >= n) {
    rows.resize(n);
    for (std::size_t i = 0; i < n; ++i) rows[i] = i;
    return rows;
  }
  // Floyd: for j = n-m .. n-1 pick t in [0, j]; take t unless already taken,
  // else take j. Every m-subset is equally likely, and the cost depends on m
  // only, which matters when n is 100M and m is a few hundred thousand.
  Xoshiro256 rng(seed);
  std::unordered_set<std::size_t> chosen;
  chosen.reserve(m * 2);
  rows.reserve(m);
  for (std::size_t j = n - m; j < n; ++j) {
    const std::size_t t = static_cast<std::size_t>(rng.Below(j + 1));
    const std::size_t pick = chosen.insert(t).second ? t : j;
    if (pick == j) chosen.insert(j);
    rows.push_back(pick);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

void GatherRows(const float* data, std::size_t d, const std::vector<std::size_t>& rows,
                std::vector<float>* out) {
  out->resize(rows.size() * d);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::memcpy(out->data() + i * d, data + rows[i] * d, d * sizeof(float));
  }
}

}  // namespace strata::quant
