// Coarse clustering of an IVF index (RaBitQ-SSD §3): C centroids (default
// N / 1024) trained by two-level k-means on a bounded sample
// (quant/pq/hierarchical_kmeans.h), every vector assigned to its nearest
// centroid by searching only the fine centroids of its few nearest coarse
// groups (not an exhaustive scan), and each cluster's members ordered by
// ascending distance to their centroid (ties by id), optionally inside
// page-sized groups of nearby vectors, so that likely candidates share pages;
// a vector's page follows from its position.
//
// Pure compute over caller-owned rows; no I/O.
#ifndef STRATA_IVF_CLUSTERING_H_
#define STRATA_IVF_CLUSTERING_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/result.h"
#include "strata/status.h"

namespace strata::ivf {

struct IvfClusteringOptions {
  // C: clusters; 0 = max(1, round(n / 1024)), clamped to n.
  std::size_t clusters = 0;
  // Lloyd iterations of each k-means level.
  int iterations = 10;
  // Training sample bound, bytes of float32 rows (128 MiB).
  std::size_t max_sample_bytes = std::size_t{128} << 20;
  // Coarse groups searched per vector during assignment (>= 1); the
  // nearest fine centroid of those groups is taken.
  std::size_t assign_probe = 8;
  // Vectors assigned per batch (bounds temporary memory).
  std::size_t assign_batch = 65536;
  // Records per page of the records file. 0 or 1: members ordered by
  // distance to the centroid only (RaBitQ-SSD). g > 1: members split into
  // groups of g nearby vectors (ivf/page_groups.h), one group per page, each
  // group ordered by distance to the centroid.
  std::size_t page_group = 0;
  std::uint64_t seed = 1234;
  unsigned threads = 0;  // 0 = all cores

  // InvalidArgument naming the first bad field.
  Status Validate() const;
};

// The clusters and the storage order of their members.
struct IvfClustering {
  std::size_t num_clusters = 0;
  std::size_t dim = 0;
  // Centroids, row-major num_clusters * dim.
  std::vector<float> centroids;
  // Size num_clusters + 1: members of cluster c are order[offsets[c],
  // offsets[c + 1]).
  std::vector<std::uint64_t> offsets;
  // Row ids of the input in storage order (size n): grouped by cluster,
  // within a cluster (or a page group of it) by ascending squared L2
  // distance to the centroid, ties by row id.
  std::vector<std::uint32_t> order;
  // Squared L2 distance of order[i] to its centroid (size n).
  std::vector<float> center_distance;

  std::uint64_t size(std::size_t c) const { return offsets[c + 1] - offsets[c]; }
};

// Resolved C for n rows (see IvfClusteringOptions::clusters).
std::size_t DefaultClusterCount(std::size_t n, std::size_t requested);

// Orders one cluster's `members` (row ids into `data`, n x d, and into
// `dist`, each row's squared L2 distance to the cluster's centroid) as
// ClusterVectors does: by (distance, id); with page_group g > 1, in groups of
// g nearby vectors (page_groups.h), each group by (distance, id).
// Deterministic. (Shared with the IVF merge, which orders rewritten clusters.)
void OrderClusterMembers(const float* data, std::size_t d, const float* dist,
                         std::span<std::uint32_t> members, std::size_t page_group);

// Trains, assigns and orders n rows of `data` (n * d floats, row-major,
// finite). n < 2^32. InvalidArgument for bad options, n == 0, d == 0 or
// non-finite training rows; k-means errors pass through.
Result<IvfClustering> ClusterVectors(const float* data, std::size_t n, std::size_t d,
                                     const IvfClusteringOptions& options);

}  // namespace strata::ivf

#endif  // STRATA_IVF_CLUSTERING_H_
