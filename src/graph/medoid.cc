#include "graph/medoid.h"

#include <limits>
#include <mutex>

#include "base/parallel.h"

namespace strata::graph {

namespace {
// Rows per partial sum. The partials are combined in block order, so the
// floating-point result does not depend on which thread summed which block.
constexpr std::size_t kBlockRows = 4096;
}  // namespace

std::vector<float> ComputeCentroid(const VectorView& vectors, std::uint32_t num_threads) {
  const std::size_t n = vectors.size();
  const std::size_t d = vectors.dim();
  if (n == 0) return {};
  const std::size_t blocks = (n + kBlockRows - 1) / kBlockRows;
  std::vector<double> partial(blocks * d, 0.0);
  ParallelFor(
      blocks, num_threads,
      [&](std::size_t b, unsigned) {
        double* acc = partial.data() + b * d;
        const std::size_t end = std::min(n, (b + 1) * kBlockRows);
        for (std::size_t i = b * kBlockRows; i < end; ++i) {
          const float* row = vectors.Row(static_cast<NodeId>(i));
          for (std::size_t j = 0; j < d; ++j) acc[j] += row[j];
        }
      },
      /*grain=*/1);
  std::vector<double> sum(d, 0.0);
  for (std::size_t b = 0; b < blocks; ++b) {
    for (std::size_t j = 0; j < d; ++j) sum[j] += partial[b * d + j];
  }
  std::vector<float> mean(d);
  for (std::size_t j = 0; j < d; ++j) mean[j] = static_cast<float>(sum[j] / static_cast<double>(n));
  return mean;
}

NodeId ComputeMedoid(const VectorView& vectors, std::uint32_t num_threads) {
  const std::size_t n = vectors.size();
  if (n == 0) return kInvalidNode;
  const std::vector<float> mean = ComputeCentroid(vectors, num_threads);
  // Always squared L2 to the mean (DiskANN does the same for every metric):
  // the point is a central starting place, not a nearest neighbour.
  auto l2 = [&](NodeId i) {
    const float* row = vectors.Row(i);
    float s = 0.0f;
    for (std::size_t j = 0; j < mean.size(); ++j) {
      const float t = row[j] - mean[j];
      s += t * t;
    }
    return s;
  };
  std::mutex mu;
  Neighbor best{kInvalidNode, std::numeric_limits<float>::infinity()};
  ParallelForChunks(n, num_threads, 4096, [&](std::size_t b, std::size_t e, unsigned) {
    Neighbor local{kInvalidNode, std::numeric_limits<float>::infinity()};
    for (std::size_t i = b; i < e; ++i) {
      const Neighbor c{static_cast<NodeId>(i), l2(static_cast<NodeId>(i))};
      if (NeighborLess(c, local)) local = c;
    }
    std::lock_guard<std::mutex> guard(mu);
    if (NeighborLess(local, best)) best = local;
  });
  return best.id;
}

}  // namespace strata::graph
