#include "index/graph_loader.h"

#include <algorithm>
#include <vector>

#include "base/aligned_buffer.h"
#include "format/graph_node_file.h"
#include "format/manifest.h"
#include "index/build_util.h"
#include "index/index_files.h"
#include "kernels/distance.h"

#include <cstring>

namespace strata {

Result<graph::VamanaGraph> LoadGraphFromIndex(const std::string& dir, std::uint64_t rows,
                                              std::uint32_t dim, Metric metric,
                                              std::uint32_t max_degree,
                                              std::vector<float>* vectors) {
  STRATA_ASSIGN_OR_RETURN(format::Manifest m, format::ReadManifest(dir));
  if (m.index_type != "graph" || m.num_vectors != rows || m.dim != dim || m.metric != metric) {
    return Status::InvalidArgument(dir + ": not a graph index over the same " +
                                   std::to_string(rows) + " x " + std::to_string(dim) + " " +
                                   std::string(MetricName(metric)) + " vectors");
  }
  STRATA_ASSIGN_OR_RETURN(format::GraphNodeFile file,
                          format::GraphNodeFile::Open(dir + "/" + kGraphNodesFile));
  const format::GraphLayout& l = file.layout();
  if (l.max_degree != max_degree) {
    return Status::InvalidArgument(dir + ": graph has R " + std::to_string(l.max_degree) +
                                   ", not " + std::to_string(max_degree));
  }
  const std::uint64_t entry_slot = m.parameters.value("entry_point", std::uint64_t{0});
  if (entry_slot >= l.num_slots) return Status::Corruption(dir + ": bad entry point");
  // Pass 1 (one sequential read): each row's neighbour slots and each slot's row.
  std::vector<std::uint32_t> row_of(l.num_slots, graph::kInvalidNode);
  STRATA_ASSIGN_OR_RETURN(graph::FlatAdjacency adjacency,
                          graph::FlatAdjacency::Create(rows, max_degree));
  const std::uint64_t chunk = std::max<std::uint64_t>(
      l.sectors_per_record, (std::uint64_t{16} << 20) / format::kSector);
  AlignedBuffer buffer(chunk * format::kSector);
  std::vector<std::byte> scratch;
  std::vector<graph::NodeId> nbrs;
  if (vectors != nullptr) vectors->assign(rows * dim, 0.0f);
  const std::uint64_t sectors = l.data_sectors();
  for (std::uint64_t first = 0; first < sectors; first += chunk) {
    const std::uint64_t count = std::min(chunk, sectors - first);
    std::span<std::byte> data(buffer.data(), count * format::kSector);
    STRATA_RETURN_IF_ERROR(file.ReadSectors(1 + first, count, data));
    // Slots whose records start inside this chunk.
    const std::uint64_t per = l.records_per_sector;
    const std::uint64_t slot_begin = per ? first * per : first / l.sectors_per_record;
    const std::uint64_t slot_end =
        std::min<std::uint64_t>(l.num_slots, per ? (first + count) * per
                                                 : (first + count) / l.sectors_per_record);
    for (std::uint64_t s = slot_begin; s < slot_end; ++s) {
      const format::RecordLocation loc = l.Locate(s);
      format::NodeRecordView v;
      STRATA_RETURN_IF_ERROR(format::DecodeRecord(
          l, s, loc, data.subspan((loc.sector - 1 - first) * format::kSector), &scratch, &v));
      if (v.external_id == kInvalidVectorId) continue;
      if (v.external_id >= rows) {
        return Status::Corruption(dir + ": record row " + std::to_string(v.external_id) +
                                  " out of range");
      }
      row_of[s] = static_cast<std::uint32_t>(v.external_id);
      if (vectors != nullptr) {
        WidenToFloat(l.element_type, v.vector.data(), dim,
                    vectors->data() + static_cast<std::size_t>(v.external_id) * dim);
      }
      nbrs.clear();
      for (std::uint32_t j = 0; j < v.degree; ++j) {
        nbrs.push_back(static_cast<graph::NodeId>(v.neighbour(j)));  // slots for now
      }
      adjacency.Set(static_cast<graph::NodeId>(v.external_id), nbrs);
    }
  }
  // Pass 2: slots -> rows.
  for (std::uint64_t r = 0; r < rows; ++r) {
    nbrs.assign(adjacency.Neighbors(static_cast<graph::NodeId>(r)).begin(),
                adjacency.Neighbors(static_cast<graph::NodeId>(r)).end());
    for (graph::NodeId& nb : nbrs) {
      if (nb >= l.num_slots || row_of[nb] == graph::kInvalidNode) {
        return Status::Corruption(dir + ": neighbour slot " + std::to_string(nb) + " is empty");
      }
      nb = row_of[nb];
    }
    adjacency.Set(static_cast<graph::NodeId>(r), nbrs);
  }
  if (row_of[entry_slot] == graph::kInvalidNode) return Status::Corruption(dir + ": empty entry");
  return graph::VamanaGraph::FromParts(std::move(adjacency), row_of[entry_slot], metric,
                                       max_degree);
}

}  // namespace strata
