// Repairing reachability: link nodes that greedy search from the entry point
// can never reach.
//
// Vamana graphs built with alpha > 1 are almost always fully reachable from
// the medoid, but reverse-edge pruning can strand a node (no remaining
// in-edge) and a well-separated cluster may hang on a single edge. Such nodes
// can never be returned by a search, so the build links them back in.
#ifndef STRATA_GRAPH_CONNECTIVITY_H_
#define STRATA_GRAPH_CONNECTIVITY_H_

#include <cstdint>

#include "graph/adjacency.h"
#include "graph/neighbor.h"
#include "graph/vector_view.h"

namespace strata::graph {

struct ConnectReport {
  std::uint64_t unreachable_before = 0;
  std::uint64_t edges_added = 0;     // appended into a list with a free slot
  std::uint64_t edges_replaced = 0;  // overwrote an edge not needed for reachability
  std::uint64_t unreachable_after = 0;
};

// For each node u not reachable from `entry` (in id order): greedy-search for
// u's vector from `entry` with list size `list_size`, and add the edge v -> u
// from the nearest expanded node v with degree < max_degree, else from the
// nearest scored node with a free slot, else from the nearest of up to 4096
// other reachable nodes with a free slot; only if none has one, replace the
// longest edge of the nearest expanded v that is not on a BFS spanning tree
// of the reachable part (so no reachable node is ever stranded). Nodes
// reachable from u become reachable too, so one pass links everything. Degrees never exceed
// max(max_degree, current degree); no self-loops or duplicates are created.
// Deterministic; single-threaded (the number of stranded nodes is tiny).
// Requires graph->size() == vectors.size() and entry < size.
ConnectReport ConnectUnreachable(FlatAdjacency* graph, NodeId entry, const VectorView& vectors,
                                 std::uint32_t max_degree, std::uint32_t list_size);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_CONNECTIVITY_H_
