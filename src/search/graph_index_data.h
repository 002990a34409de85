// GraphIndexData: the read-only, shared state of an open graph index that
// every search thread uses: the node file (SSD-resident records), the PQ
// codebook and codes held in RAM, the entry point, and the optional node
// cache. Built by the index module at open; immutable afterwards, so any
// number of GraphSearchContexts may search it concurrently.
#ifndef STRATA_SEARCH_GRAPH_INDEX_DATA_H_
#define STRATA_SEARCH_GRAPH_INDEX_DATA_H_

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "format/graph_node_file.h"
#include "kernels/distance.h"
#include "quant/pq/product_quantizer.h"
#include "strata/types.h"

namespace strata::search {

// Records of the nodes kept in RAM (the static node cache): each record's
// bytes (layout.record_bytes) in one arena, found through a hash map.
class NodeCache {
 public:
  void Reserve(std::size_t nodes, std::size_t record_bytes);
  // Copies `record` (record_bytes) for `node`; ignores a node already cached.
  void Add(std::uint32_t node, const std::byte* record);
  // The cached record of `node`, or nullptr.
  const std::byte* Find(std::uint32_t node) const {
    auto it = index_.find(node);
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
  std::vector<std::uint8_t> pq_codes;   // num_nodes * pq.code_size() (RAM)
  std::uint32_t entry_point = 0;        // medoid
  NodeCache cache;                      // may be empty
  const kernels::DistanceKernels* kernels = &kernels::BestKernels();

  std::uint64_t num_nodes() const { return nodes.layout().num_nodes; }
  std::uint32_t dim() const { return nodes.layout().dim; }
  const std::uint8_t* code(std::uint32_t node) const {
    return pq_codes.data() + static_cast<std::size_t>(node) * pq.code_size();
  }
  // Bytes of RAM held for search (codes, codebook, cache).
  std::size_t MemoryBytes() const;
};

}  // namespace strata::search

#endif  // STRATA_SEARCH_GRAPH_INDEX_DATA_H_
