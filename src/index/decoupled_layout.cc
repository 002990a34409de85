#include "strata/graph_index.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/aligned_buffer.h"
#include "format/edge_file.h"
#include "format/graph_node_file.h"
#include "format/vector_file.h"
#include "graph/page_shuffle.h"
#include "index/index_files.h"

namespace strata {
namespace {

// Reads a node file's records in ascending slot order through one buffer of
// consecutive sectors.
class NodeCursor {
 public:
  explicit NodeCursor(const format::GraphNodeFile& file)
      : file_(file), chunk_(kChunkSectors * format::kSector) {}

  Status Get(std::uint64_t slot, format::NodeRecordView* out) {
    const format::RecordLocation loc = file_.layout().Locate(slot);
    if (loc.sector < first_ || loc.sector + loc.sectors > first_ + count_) {
      const std::uint64_t end = 1 + file_.layout().data_sectors();
      first_ = loc.sector;
      count_ = std::min<std::uint64_t>(std::max<std::uint64_t>(kChunkSectors, loc.sectors),
                                       end - first_);
      if (count_ * format::kSector > chunk_.size()) chunk_ = AlignedBuffer(count_ * format::kSector);
      STRATA_RETURN_IF_ERROR(file_.ReadSectors(
          first_, count_, std::span<std::byte>(chunk_.data(), count_ * format::kSector)));
    }
    const std::span<const std::byte> sectors(
        chunk_.data() + (loc.sector - first_) * format::kSector, loc.sectors * format::kSector);
    // ReadSectors verified the trailers; decode only.
    return format::DecodeRecord(file_.layout(), slot, loc, sectors, &scratch_, out);
  }

 private:
  static constexpr std::uint64_t kChunkSectors = 1024;  // 4 MiB
  const format::GraphNodeFile& file_;
  AlignedBuffer chunk_;
  std::uint64_t first_ = 0;
  std::uint64_t count_ = 0;
  std::vector<std::byte> scratch_;
};

// Every slot's neighbour list, read sequentially, in CSR form (8 B per
// vertex + 4 B per edge): the page shuffle's input and then the edge lists'
// source, in whatever order the pages take the vertices.
Status ReadLists(const format::GraphNodeFile& nodes, std::vector<std::uint64_t>* offsets,
                 std::vector<graph::NodeId>* neighbours) {
  const format::GraphLayout& layout = nodes.layout();
  NodeCursor cursor(nodes);
  format::NodeRecordView record;
  offsets->assign(1, 0);
  offsets->reserve(layout.num_slots + 1);
  neighbours->clear();
  for (std::uint64_t slot = 0; slot < layout.num_slots; ++slot) {
    STRATA_RETURN_IF_ERROR(cursor.Get(slot, &record));
    if (record.external_id != kInvalidVectorId) {  // an empty slot has no list
      for (std::uint32_t i = 0; i < record.degree; ++i) {
        neighbours->push_back(static_cast<graph::NodeId>(record.neighbour(i)));
      }
    }
    offsets->push_back(neighbours->size());
  }
  return Status::OK();
}

// The share of a page the shuffle's groups are sized to fill with lists of
// the mean length: a group of longer lists than the mean still fits most
// of the time (synth1m 100k, R 64: mean degree 36).
constexpr double kGroupFill = 0.95;

// The edge file's placement (format/edge_file.h) for the shuffle's groups
// of `per_group` (page-major, kEmptySlot padding): a page per group,
// ended by a break; a group whose lists overflow the page passes the ones
// that do not fit on to the next group's page, ahead of its own, so the
// file has as many pages as groups but where the overflow accumulates.
std::vector<std::uint32_t> GroupsToPages(std::span<const std::uint32_t> members,
                                         std::uint32_t per_group, const graph::CsrGraphView& csr,
                                         const format::EdgePageGeometry& geometry) {
  std::vector<std::uint32_t> placement;
  placement.reserve(members.size() + members.size() / per_group + 1);
  std::vector<std::uint32_t> carry, next;
  for (std::size_t start = 0; start < members.size(); start += per_group) {
    for (std::size_t i = start; i < std::min(members.size(), start + per_group); ++i) {
      if (members[i] != graph::kEmptySlot) carry.push_back(members[i]);
    }
    std::size_t room = format::kEdgePageRoom;
    next.clear();
    for (const std::uint32_t v : carry) {
      const std::size_t bytes = geometry.ListBytes(csr.Neighbors(v).size());
      if (bytes <= room && next.empty()) {
        placement.push_back(v);
        room -= bytes;
      } else {
        next.push_back(v);
      }
    }
    placement.push_back(format::kNoVertex);
    carry.swap(next);
  }
  // What the last group left: pages of their own.
  placement.insert(placement.end(), carry.begin(), carry.end());
  return placement;
}

}  // namespace

Result<DecoupledLayoutReport> WriteDecoupledLayout(const std::string& index_dir,
                                                   const std::string& out_dir,
                                                   const DecoupledLayoutOptions& options) {
  STRATA_ASSIGN_OR_RETURN(format::GraphNodeFile nodes,
                          format::GraphNodeFile::Open(index_dir + "/" + kGraphNodesFile));
  const format::GraphLayout& layout = nodes.layout();
  if (layout.num_slots >= format::kNoVertex) {
    return Status::NotSupported(nodes.path() + ": more than 2^32 - 1 slots");
  }
  DecoupledLayoutReport report;
  report.vertices = layout.num_slots;
  const std::uint32_t capacity = format::EdgePageGeometry::CapacityForDegree(layout.max_degree);
  const std::uint32_t vector_bytes =
      options.vectors_in_edge_pages
          ? static_cast<std::uint32_t>(layout.dim * ElementSize(layout.element_type))
          : 0;
  STRATA_ASSIGN_OR_RETURN(format::EdgePageGeometry geometry,
                          format::EdgePageGeometry::ForCapacity(capacity, vector_bytes));

  std::vector<std::uint64_t> offsets;
  std::vector<graph::NodeId> neighbours;
  STRATA_RETURN_IF_ERROR(ReadLists(nodes, &offsets, &neighbours));
  const graph::CsrGraphView csr{offsets, neighbours};
  // Lists a page holds: fixed-size records a fixed number, lists packed by
  // length as many as their bytes allow. The shuffle's groups are sized
  // for lists of the mean length with a little room to spare, and a group
  // that still overflows passes its last lists on to the next page
  // (GroupsToPages).
  const double mean_bytes =
      geometry.ListBytes(0) +
      (geometry.fixed_size() ? 0.0
                             : 4.0 * static_cast<double>(neighbours.size()) /
                                   static_cast<double>(std::max<std::uint64_t>(1, layout.num_slots)));
  const auto records_per_page =
      geometry.fixed_size()
          ? geometry.slots_per_page
          : std::clamp<std::uint32_t>(
                static_cast<std::uint32_t>(kGroupFill * format::kEdgePageRoom / mean_bytes), 1,
                geometry.slots_per_page);
  std::vector<std::uint32_t> placement;
  if (options.shuffle) {
    // Starling's block shuffle with the edge page's capacity: vertices whose
    // lists share a page are graph neighbours, so one edge-page read serves
    // several expansions (NAVIS's locality-driven placement).
    graph::PageShuffleOptions so;
    so.records_per_page = records_per_page;
    so.refine_rounds = options.refine_rounds;
    so.swap_passes = options.swap_passes;
    so.threads = options.threads;
    graph::PageShuffleReport sr;
    STRATA_ASSIGN_OR_RETURN(graph::PagePartition partition, graph::ShufflePages(csr, so, &sr));
    report.overlap_before = sr.identity_overlap_ratio;
    report.overlap_after = sr.final_overlap_ratio;
    placement = GroupsToPages(partition.members, records_per_page, csr, geometry);
  } else {
    placement.resize(layout.num_slots);
    for (std::uint32_t v = 0; v < placement.size(); ++v) placement[v] = v;
    STRATA_ASSIGN_OR_RETURN(graph::PagePartition identity,
                            graph::IdentityPartition(layout.num_slots, records_per_page));
    STRATA_ASSIGN_OR_RETURN(report.overlap_before, graph::OverlapRatio(csr, identity, options.threads));
    report.overlap_after = report.overlap_before;
  }
  auto lists = [&](std::uint32_t vertex, std::vector<std::uint32_t>* ids) -> Status {
    const std::span<const graph::NodeId> list = csr.Neighbors(vertex);
    ids->assign(list.begin(), list.end());
    return Status::OK();
  };
  format::NodeRecordView record;
  // The packed baseline's vectors, in slot order (the pages take them in
  // placement order; the node file is read once, sequentially).
  std::vector<std::byte> slot_vectors;
  if (vector_bytes > 0) {
    slot_vectors.resize(layout.num_slots * std::size_t{vector_bytes});
    NodeCursor cursor(nodes);
    for (std::uint64_t slot = 0; slot < layout.num_slots; ++slot) {
      STRATA_RETURN_IF_ERROR(cursor.Get(slot, &record));
      if (record.external_id == kInvalidVectorId) continue;  // zeros
      std::memcpy(slot_vectors.data() + slot * vector_bytes, record.vector.data(), vector_bytes);
    }
  }
  auto vectors = [&](std::uint32_t vertex, std::span<std::byte> out) -> Status {
    std::memcpy(out.data(), slot_vectors.data() + std::size_t{vertex} * vector_bytes, out.size());
    return Status::OK();
  };
  STRATA_ASSIGN_OR_RETURN(
      report.edge_bytes,
      format::WriteEdgeFile(out_dir + "/graph.edges", capacity, layout.num_slots, placement, lists,
                            vector_bytes, vectors));
  slot_vectors = {};
  {
    NodeCursor cursor(nodes);
    STRATA_ASSIGN_OR_RETURN(
        format::VectorFileLayout vl,
        format::VectorFileLayout::Make(layout.dim, layout.element_type, layout.num_slots));
    auto vectors = [&](std::uint64_t slot, std::span<std::byte> out) -> Status {
      STRATA_RETURN_IF_ERROR(cursor.Get(slot, &record));
      if (record.external_id == kInvalidVectorId) return Status::OK();  // zeros
      std::memcpy(out.data(), record.vector.data(), out.size());
      return Status::OK();
    };
    STRATA_ASSIGN_OR_RETURN(report.vector_bytes,
                            format::WriteVectorFile(out_dir + "/graph.vectors", vl, vectors));
  }
  report.edge_pages = report.edge_bytes / format::kSector - 1;
  return report;
}

}  // namespace strata
