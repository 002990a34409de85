// GraphIndexData: the read-only, shared state of an open graph index that
// every search thread uses: the node file (SSD-resident records), the PQ
// codebook and (unless all-in-storage) the codes held in RAM, the entry
// point, the optional MemGraph and node cache. Built by the index module at
// open; immutable afterwards, so any number of GraphSearchContexts may search
// it concurrently. All node ids here are slots of the node file
// (format/graph_layout.h); results are mapped back to external ids through
// the records.
#ifndef STRATA_SEARCH_GRAPH_INDEX_DATA_H_
#define STRATA_SEARCH_GRAPH_INDEX_DATA_H_

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "format/graph_node_file.h"
#include "kernels/distance.h"
#include "quant/pq/product_quantizer.h"
#include "search/mem_graph.h"
#include "strata/types.h"

namespace strata::search {

// Records of the nodes kept in RAM (the node cache): each record's bytes
// (layout.record_bytes, contiguous) in one arena, found through a hash map.
class NodeCache {
 public:
  void Reserve(std::size_t nodes, std::size_t record_bytes);
  // Copies `record` (record_bytes) for `slot`; ignores a slot already cached.
  void Add(std::uint32_t slot, const std::byte* record);
  // The cached record of `slot`, or nullptr.
  const std::byte* Find(std::uint32_t slot) const {
    if (index_.empty()) return nullptr;
    auto it = index_.find(slot);
    return it == index_.end() ? nullptr : arena_.data() + it->second;
  }
  std::size_t size() const { return index_.size(); }
  std::size_t MemoryBytes() const;

 private:
  std::size_t record_bytes_ = 0;
  std::vector<std::byte> arena_;
  std::unordered_map<std::uint32_t, std::size_t> index_;
};

struct GraphIndexData {
  Metric metric = Metric::kL2;
  format::GraphNodeFile nodes;          // SSD-resident records
  quant::ProductQuantizer pq;           // codebook (RAM)
  // num_slots * pq.code_size(), indexed by slot (RAM). Empty when the index
  // is all-in-storage and opened without resident codes: neighbours' codes
  // then come from the records themselves.
  std::vector<std::uint8_t> pq_codes;
  std::uint32_t entry_point = 0;        // medoid's slot
  std::vector<std::uint8_t> entry_code; // its PQ code (always in RAM)
  MemGraph mem_graph;                   // may be empty
  std::vector<std::uint8_t> mem_graph_codes;  // PQ codes of its sample nodes, in its order
  NodeCache cache;                      // may be empty
  // Page-shuffled layouts: row -> slot (index/index_files.h kRowSlotsFile);
  // empty for packed layouts (slot = row) and for indexes written without it.
  std::vector<std::uint32_t> slot_of_row;
  // Graphs built with labels (index/index_files.h kLabelStartsFile): each
  // label's start row (0xFFFFFFFF: none), and for page-shuffled layouts the
  // inverse of slot_of_row (0xFFFFFFFF for empty slots), so that a walk the
  // filter steers can judge a neighbour slot by its row. Empty otherwise.
  std::vector<std::uint32_t> label_start_rows;
  std::vector<std::uint32_t> row_of_slot;
  const kernels::DistanceKernels* kernels = &kernels::BestKernels();

  std::uint64_t num_nodes() const { return nodes.layout().num_nodes; }
  std::uint64_t num_slots() const { return nodes.layout().num_slots; }
  std::uint32_t dim() const { return nodes.layout().dim; }
  bool resident_codes() const { return !pq_codes.empty(); }
  // Whether rows can be mapped to slots (SlotOfRow is valid).
  bool rows_mappable() const {
    return !nodes.layout().external_ids || !slot_of_row.empty();
  }
  std::uint32_t SlotOfRow(std::uint64_t row) const {
    return slot_of_row.empty() ? static_cast<std::uint32_t>(row) : slot_of_row[row];
  }
  // The row in `slot` (0xFFFFFFFF for an empty one); valid when
  // label_start_rows is loaded.
  std::uint32_t RowOfSlot(std::uint32_t slot) const {
    if (row_of_slot.empty()) return slot < num_nodes() ? slot : 0xFFFFFFFFu;
    return row_of_slot[slot];
  }
  const std::uint8_t* code(std::uint32_t slot) const {
    return pq_codes.data() + static_cast<std::size_t>(slot) * pq.code_size();
  }
  // Bytes of RAM held for search (codes, codebook, MemGraph, cache).
  std::size_t MemoryBytes() const;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_GRAPH_INDEX_DATA_H_
