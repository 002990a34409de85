// Per-node label sets for a label-aware Vamana build and its searches.
//
// Gollapudi et al., "Filtered-DiskANN: Graph Algorithms for Approximate
// Nearest Neighbor Search with Filters", WWW 2023. FilteredVamana builds the
// graph so that the nodes carrying any one label form a navigable subgraph:
// each insert searches only among nodes sharing a label with the new node,
// from the start points of its labels, and the prune removes a candidate c
// of node p because of a selected s only when s carries every label p and c
// share (FilteredRobustPrune). A filtered search then starts from the
// queried labels' start points and walks only nodes that pass, which finds
// passing points even where they lie away from the query's unfiltered
// neighbourhood (a class the query is not of).
//
// A view over caller-owned CSR arrays: node i's labels are
// labels[offsets[i] .. offsets[i+1]), sorted ascending without duplicates.
#ifndef STRATA_GRAPH_NODE_LABELS_H_
#define STRATA_GRAPH_NODE_LABELS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "graph/neighbor.h"
#include "graph/vector_view.h"
#include "strata/status.h"

namespace strata::graph {

struct NodeLabels {
  std::span<const std::uint64_t> offsets;  // node count + 1 entries, or none
  std::span<const std::uint32_t> labels;

  bool empty() const { return offsets.empty(); }
  std::span<const std::uint32_t> Of(NodeId i) const {
    return labels.subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
  // Whether nodes a and b carry a label in common.
  bool Share(NodeId a, NodeId b) const;
  // Whether node `s` carries every label that nodes p and c share
  // (FilteredRobustPrune's condition for s to occlude c).
  bool SharedCoveredBy(NodeId p, NodeId c, NodeId s) const;
  // Whether node i carries every label of `required` (sorted, unique).
  bool HasAll(NodeId i, std::span<const std::uint32_t> required) const;
  // One past the largest label (0 when there is none).
  std::uint32_t LabelBound() const;
  // InvalidArgument unless the view describes `nodes` nodes: offsets
  // non-decreasing from 0 to labels.size(), each row strictly ascending.
  Status Validate(std::uint64_t nodes) const;
};

// A start point per label (index = label, kInvalidNode where no node carries
// it): the node carrying the label nearest (squared L2) to the mean of the
// nodes that carry it (Filtered-DiskANN's per-label medoid). Deterministic
// for any thread count.
std::vector<NodeId> ComputeLabelStartPoints(const VectorView& vectors, const NodeLabels& labels,
                                            std::uint32_t num_threads);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_NODE_LABELS_H_
