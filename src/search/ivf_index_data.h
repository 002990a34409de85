// IvfIndexData: the read-only, shared state of an open IVF index (RaBitQ-SSD):
// the fine quantizer (rotation, D_m, B), the coarse quantizer over the
// centroids, per-cluster tables, ids and FastScan blocks in RAM, and the
// SSD records file. Built by the index module at open; immutable afterwards,
// so any number of IvfSearchContexts may search it concurrently.
//
// Storage position p (0..N-1) numbers vectors cluster by cluster in storage
// order; cluster c holds positions [cluster_offsets[c], cluster_offsets[c+1]),
// its RAM blocks are [block_offsets[c], block_offsets[c+1]) and its records
// start at records.first_unit()[c].
#ifndef STRATA_SEARCH_IVF_INDEX_DATA_H_
#define STRATA_SEARCH_IVF_INDEX_DATA_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "format/ivf_records_file.h"
#include "ivf/cluster_encoder.h"
#include "ivf/coarse_quantizer.h"
#include "quant/rabitq/quantizer.h"
#include "strata/types.h"

namespace strata::search {

struct IvfIndexData {
  Metric metric = Metric::kL2;
  std::uint32_t dim = 0;
  ivf::RerankKind rerank = ivf::RerankKind::kExCode;
  std::optional<quant::rabitq::RabitqQuantizer> quantizer;
  // Centroids (C * dim); the coarse quantizer points into this vector, which
  // must therefore never be resized after it is built.
  std::vector<float> centroids;
  std::optional<ivf::CoarseQuantizer> coarse;
  std::vector<std::uint64_t> cluster_offsets;  // C + 1 storage positions
  std::vector<std::uint64_t> block_offsets;    // C + 1 RAM block indices
  std::vector<std::uint32_t> ids;              // N input row ids by position
  // The inverse of `ids` (input row id -> storage position), for searches
  // that rank a listed set of rows (SearchParams::restrict_to): 4 B/vector.
  std::vector<std::uint32_t> position_of;
  std::vector<std::uint8_t> ram_blocks;
  // Empty, or each storage position's listed code (quant/rabitq/layout.h),
  // which restricted scans estimate listed rows with.
  std::vector<std::uint8_t> listed_codes;
  format::IvfRecordsFile records;
  std::uint32_t default_nprobe = 1;

  std::size_t num_clusters() const {
    return cluster_offsets.empty() ? 0 : cluster_offsets.size() - 1;
  }
  std::uint64_t num_vectors() const { return ids.size(); }
  // The cluster holding storage position `pos` (< num_vectors()).
  std::uint32_t ClusterOf(std::uint64_t pos) const {
    const auto it = std::upper_bound(cluster_offsets.begin(), cluster_offsets.end(), pos);
    return static_cast<std::uint32_t>(it - cluster_offsets.begin() - 1);
  }
  // RAM held for search, bytes.
  std::size_t MemoryBytes() const {
    return (quantizer ? quantizer->padded_dim() * 8 : 0) + centroids.size() * 4 +
           (coarse ? coarse->MemoryBytes() : 0) + cluster_offsets.size() * 8 +
           block_offsets.size() * 8 + ids.size() * 4 + position_of.size() * 4 +
           ram_blocks.size() + listed_codes.size() +
           records.first_unit().size() * 8;
  }
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_IVF_INDEX_DATA_H_
