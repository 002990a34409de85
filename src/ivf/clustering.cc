#include "ivf/clustering.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "base/parallel.h"
#include "ivf/page_groups.h"
#include "quant/pq/hierarchical_kmeans.h"

namespace strata::ivf {

Status IvfClusteringOptions::Validate() const {
  if (iterations < 0 || iterations > 1000) {
    return Status::InvalidArgument("clustering: iterations must be in 0..1000");
  }
  if (assign_probe == 0) return Status::InvalidArgument("clustering: assign_probe must be >= 1");
  if (assign_batch == 0) return Status::InvalidArgument("clustering: assign_batch must be >= 1");
  if (clusters > 0xFFFFFFFFull) return Status::InvalidArgument("clustering: too many clusters");
  return Status::OK();
}

std::size_t DefaultClusterCount(std::size_t n, std::size_t requested) {
  std::size_t c = requested;
  if (c == 0) c = static_cast<std::size_t>(std::llround(static_cast<double>(n) / 1024.0));
  return std::clamp<std::size_t>(c, 1, std::max<std::size_t>(n, 1));
}

void OrderClusterMembers(const float* data, std::size_t d, const float* dist,
                         std::span<std::uint32_t> members, std::size_t page_group) {
  const auto nearer = [&](std::uint32_t a, std::uint32_t b) {
    return dist[a] != dist[b] ? dist[a] < dist[b] : a < b;
  };
  std::sort(members.begin(), members.end(), nearer);
  const std::size_t g = page_group;
  if (g <= 1) return;
  OrderInPageGroups(data, d, members, g);
  for (std::size_t i = 0; i < members.size(); i += g) {
    const std::size_t e = std::min(members.size(), i + g);
    std::sort(members.begin() + static_cast<std::ptrdiff_t>(i),
              members.begin() + static_cast<std::ptrdiff_t>(e), nearer);
  }
}

Result<IvfClustering> ClusterVectors(const float* data, std::size_t n, std::size_t d,
                                     const IvfClusteringOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (n == 0 || d == 0 || data == nullptr) {
    return Status::InvalidArgument("clustering: no rows to cluster");
  }
  if (n >= 0xFFFFFFFFull) return Status::NotSupported("clustering: at most 2^32 - 2 rows");
  const std::size_t k = DefaultClusterCount(n, options.clusters);

  quant::KMeansOptions km;
  km.k = k;
  km.iterations = options.iterations;
  km.seed = options.seed;
  km.threads = options.threads;
  // The byte bound alone may leave fewer sample rows than centroids at very
  // high d; never go below k rows (plus a few per centroid when available).
  km.max_sample_bytes = std::max(options.max_sample_bytes, std::min(n, 4 * k) * d * sizeof(float));
  STRATA_ASSIGN_OR_RETURN(quant::HierarchicalKMeans model,
                          quant::TrainHierarchicalKMeans(data, n, d, km));

  IvfClustering out;
  out.num_clusters = k;
  out.dim = d;
  out.centroids = model.centroids;

  // Assignment in batches: O(batch * probe) temporary memory.
  std::vector<std::uint32_t> labels(n);
  std::vector<float> dist(n);
  const std::size_t probe = std::min(options.assign_probe, model.coarse_k());
  for (std::size_t b = 0; b < n; b += options.assign_batch) {
    const std::size_t m = std::min(options.assign_batch, n - b);
    STRATA_RETURN_IF_ERROR(quant::AssignHierarchical(
        model, data + b * d, m, probe, labels.data() + b, dist.data() + b, options.threads));
  }

  // Counting sort by label, then order each cluster by (distance, id).
  out.offsets.assign(k + 1, 0);
  for (std::uint32_t l : labels) ++out.offsets[l + 1];
  for (std::size_t c = 0; c < k; ++c) out.offsets[c + 1] += out.offsets[c];
  out.order.resize(n);
  {
    std::vector<std::uint64_t> cursor(out.offsets.begin(), out.offsets.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      out.order[cursor[labels[i]]++] = static_cast<std::uint32_t>(i);
  }
  ParallelFor(
      k, options.threads,
      [&](std::size_t c, unsigned) {
        OrderClusterMembers(data, d, dist.data(),
                            std::span<std::uint32_t>(out.order.data() + out.offsets[c], out.size(c)),
                            options.page_group);
      },
      4);
  out.center_distance.resize(n);
  for (std::size_t i = 0; i < n; ++i) out.center_distance[i] = dist[out.order[i]];
  return out;
}

}  // namespace strata::ivf
