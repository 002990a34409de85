#include "quant/pq/balanced_assign.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "quant/pq/nearest.h"

namespace strata::quant {

Status AssignBalanced(const float* x, std::size_t n, std::size_t d, const float* centroids,
                      std::size_t k, std::size_t max_cluster_size, std::uint32_t* labels,
                      float* distances, unsigned threads, std::size_t candidates) {
  if (k == 0 || max_cluster_size == 0 || (n + max_cluster_size - 1) / max_cluster_size > k) {
    return Status::InvalidArgument(
        "AssignBalanced: " + std::to_string(k) + " clusters of at most " +
        std::to_string(max_cluster_size) + " rows cannot hold " + std::to_string(n) + " rows");
  }
  if (n == 0) return Status::OK();
  if (labels == nullptr) return Status::InvalidArgument("AssignBalanced: null labels");
  const std::size_t t = std::clamp<std::size_t>(candidates, 1, k);
  std::vector<std::uint32_t> cand(n * t);
  std::vector<float> cand_dist(n * t);
  STRATA_RETURN_IF_ERROR(
      AssignTopK(x, n, d, centroids, k, t, cand.data(), cand_dist.data(), threads));

  // next[r]: index into row r's candidate list of its current proposal.
  std::vector<std::uint32_t> next(n, 0);
  std::vector<std::vector<std::uint32_t>> held(k);  // rows accepted so far
  std::vector<std::uint32_t> pending(n);
  for (std::size_t r = 0; r < n; ++r) pending[r] = static_cast<std::uint32_t>(r);
  std::vector<std::uint32_t> rejected, overflow, touched;
  std::vector<char> is_touched(k, 0);
  // A cluster prefers rows that are closer to it; ties by row index.
  auto closer = [&](std::uint32_t a, std::uint32_t b) {
    const float da = cand_dist[std::size_t{a} * t + next[a]];
    const float db = cand_dist[std::size_t{b} * t + next[b]];
    return da < db || (da == db && a < b);
  };
  while (!pending.empty()) {
    touched.clear();
    for (const std::uint32_t r : pending) {
      const std::uint32_t c = cand[std::size_t{r} * t + next[r]];
      held[c].push_back(r);
      if (!is_touched[c]) {
        is_touched[c] = 1;
        touched.push_back(c);
      }
    }
    rejected.clear();
    for (const std::uint32_t c : touched) {
      is_touched[c] = 0;
      auto& h = held[c];
      if (h.size() <= max_cluster_size) continue;
      std::nth_element(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(max_cluster_size),
                       h.end(), closer);
      rejected.insert(rejected.end(), h.begin() + static_cast<std::ptrdiff_t>(max_cluster_size),
                      h.end());
      h.resize(max_cluster_size);
    }
    pending.clear();
    for (const std::uint32_t r : rejected) {
      if (++next[r] < t) {
        pending.push_back(r);
      } else {
        overflow.push_back(r);
      }
    }
  }
  for (std::size_t c = 0; c < k; ++c) {
    for (const std::uint32_t r : held[c]) {
      labels[r] = static_cast<std::uint32_t>(c);
      if (distances) distances[r] = cand_dist[std::size_t{r} * t + next[r]];
    }
  }
  // Rows every candidate rejected: nearest centroid with room, in row order.
  std::sort(overflow.begin(), overflow.end());
  for (const std::uint32_t r : overflow) {
    float best = std::numeric_limits<float>::infinity();
    std::size_t best_c = k;
    for (std::size_t c = 0; c < k; ++c) {
      if (held[c].size() >= max_cluster_size) continue;
      const float dist = SquaredL2(x + std::size_t{r} * d, centroids + c * d, d);
      if (best_c == k || dist < best) {
        best = dist;
        best_c = c;
      }
    }
    // Capacity was checked up front, so some centroid has room.
    held[best_c].push_back(r);
    labels[r] = static_cast<std::uint32_t>(best_c);
    if (distances) distances[r] = best;
  }
  return Status::OK();
}

}  // namespace strata::quant
