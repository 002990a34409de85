// Writing a new IVF index from an existing one plus deletes and inserts,
// without re-clustering: the old index's Split-RaBitQ quantizer (rotation,
// D_m, B; Gao & Long, "RaBitQ"; Xu et al., "RaBitQ-SSD: Split Codes and
// Pipelined I/O for SSD-Resident Vector Search") and centroids are kept, each
// new vector joins its nearest existing centroid, deleted records are
// dropped, and only the clusters that changed are rewritten:
//   - untouched clusters (no insert, no delete): RAM blocks and SSD records
//     copied as bytes, ids renumbered;
//   - rewritten clusters: the survivors' codes are kept (RAM slots repacked,
//     records copied: a code depends only on its vector and the centroid,
//     which does not move), the new members encoded against that centroid;
//   - a cluster that ends up past twice the target size is split by
//     recursive 2-means over its members' full vectors into pieces of at
//     most twice the target, each re-encoded against its own mean; a cluster
//     emptied by deletes is dropped. Either changes the centroid set, and the
//     coarse quantizer is rebuilt over it (ivf/coarse_quantizer.h).
// The target size is the one the first build aimed at, n / C then (manifest
// "target_cluster_size", carried by every merge): a collection that grows
// uniformly then gains clusters as a rebuild would (C ~ n / 1024 by
// default), where n / C of the merged index would let every cluster grow
// without bound.
//
// Record order inside a rewritten or split cluster is the build's
// (ivf/clustering.h OrderClusterMembers: page groups of nearby vectors under
// page_order = locality, else by distance to the centroid), which needs the
// members' full vectors: with rerank = raw the records are those vectors;
// otherwise the caller's `read_old_rows` supplies them. Without it, an
// excode index keeps a rewritten cluster's survivors in their old order and
// puts the new members after them, ordered among themselves (the page groups
// of the survivors then drift off page boundaries as deletes accumulate), and
// an oversize cluster stays whole (IvfMergeReport::splits_skipped).
//
// For the collection's merges (src/collection).
#ifndef STRATA_INDEX_IVF_INDEX_MERGE_H_
#define STRATA_INDEX_IVF_INDEX_MERGE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "strata/ivf_index.h"

namespace strata {

// Writes the vectors of the old index's rows `rows` (row ids as searches
// return them) into `out` (rows.size() x dim floats, row i at i * dim), as
// they were given to the index (cosine rows need not be normalised). Called
// once per merge, from the merging thread, with the rows in storage order.
using IvfRowReader = std::function<Status(std::span<const std::uint64_t> rows, float* out)>;

// What a merge did to the clusters.
struct IvfMergeReport {
  std::uint64_t old_clusters = 0;
  std::uint64_t clusters = 0;              // in the new index
  std::uint64_t clusters_copied = 0;       // untouched, copied as bytes
  std::uint64_t clusters_rewritten = 0;    // members added or dropped, not split
  std::uint64_t clusters_split = 0;        // old clusters split ...
  std::uint64_t clusters_from_splits = 0;  // ... into this many
  std::uint64_t clusters_dropped = 0;      // emptied by deletes
  std::uint64_t splits_skipped = 0;        // past 2x target, no vectors to split with
  std::uint64_t target_cluster_size = 0;
  std::uint64_t rows_read = 0;  // old rows asked of read_old_rows
  std::uint64_t rows_deleted = 0;
  std::uint64_t rows_inserted = 0;
};

// Rows of the IVF index in `old_dir` whose `deleted[row]` is nonzero are
// dropped; the `new_rows` (m x dim float32, as stored: cosine rows are
// normalised here) are appended. The new index in `index_dir` numbers its
// rows as MergeGraphIndex does: the surviving old rows in old order, then
// the new rows. It is written aside and switched in only once complete
// (BuildAside), so a failed merge leaves whatever `index_dir` held (and the
// old index) untouched. `options` gives the metric (must match the index),
// page_order and threads; its quantizer, clustering and coarse fields are
// ignored (the old index's are kept). `read_old_rows` may be null (see the
// top of this file). In the returned report, seconds_load covers the old
// tables, seconds_cluster the assignment, the reads of old rows and records
// and every cluster's rewrite (codes included), seconds_encode the new
// tables and the coarse quantizer.
// Errors: InvalidArgument for a metric that differs from the index's, a
// `deleted` span not of the index's size, `new_rows` not a whole number of
// rows, a non-finite or (cosine) zero row, or no rows left; Corruption /
// IOError from the files; the reader's errors.
Result<IvfBuildReport> MergeIvfIndex(const std::string& old_dir,
                                     std::span<const std::uint8_t> deleted,
                                     std::span<const float> new_rows, const std::string& index_dir,
                                     const IvfBuildOptions& options,
                                     IvfMergeReport* report = nullptr,
                                     const IvfRowReader& read_old_rows = nullptr);

}  // namespace strata

#endif  // STRATA_INDEX_IVF_INDEX_MERGE_H_
