// RobustPrune: choose a node's out-neighbours from a candidate pool.
//
// Subramanya et al., "DiskANN: Fast Accurate Billion-point Nearest Neighbor
// Search on a Single Node", NeurIPS 2019, Algorithm 2; DiskANN's occlude_list.
// Candidates are taken nearest first; each taken candidate s "occludes" every
// later candidate c it is much closer to than the node p is, by the factor
// alpha: for kL2/kCosine when d(p, c) / d(s, c) > alpha. alpha > 1 keeps some
// long edges, so greedy search reaches far regions in few hops.
//
// Inner product distances (-<x,y>) can be negative, so a plain ratio is
// meaningless; the occlusion factor is PipeANN's sign-aware variant (see
// OcclusionFactor), which reduces to the L2 rule when both are positive.
#ifndef STRATA_GRAPH_ROBUST_PRUNE_H_
#define STRATA_GRAPH_ROBUST_PRUNE_H_

#include <cstdint>
#include <vector>

#include "graph/graph_options.h"
#include "graph/neighbor.h"
#include "graph/node_labels.h"
#include "graph/vector_view.h"
#include "strata/types.h"

namespace strata::graph {

// Parameters of one prune (a subset of VamanaBuildOptions; see there).
struct PruneParams {
  std::uint32_t max_degree = 64;           // R: the most ids returned
  float alpha = 1.2f;                      // final occlusion threshold, >= 1
  std::uint32_t max_occlusion_size = 750;  // C: candidates considered, nearest first
  AlphaSchedule schedule = AlphaSchedule::kRising;
  bool saturate = false;  // fill free slots with the nearest unselected candidates
  // Label-aware prune (Filtered-DiskANN's FilteredRobustPrune): a selected s
  // occludes candidate c of node p only if s carries every label p and c
  // share, so that each label keeps edges among its own nodes. Not owned.
  const NodeLabels* labels = nullptr;
};

// How strongly a selected neighbour s occludes candidate c of node p, given
// d_pc = d(p, c) and d_sc = d(s, c) under `metric`; c is pruned at threshold
// a when the (running maximum of the) factor exceeds a.
//   kL2, kCosine: d_pc / d_sc (+inf when d_sc == 0: c duplicates s).
//   kInnerProduct (distances -<x,y>): 0 unless d_pc > d_sc (c is nearer s
//     than p); then d_pc / d_sc when both > 0, d_sc / d_pc when both < 0 (the
//     ratio of the similarities <s,c> / <p,c>), and +inf across signs.
float OcclusionFactor(Metric metric, float d_pc, float d_sc);

// Reusable buffers of RobustPrune (one per thread).
struct PruneScratch {
  std::vector<float> occlusion;
};

// RobustPrune's first step on its own: deduplicates `pool` by id (keeping
// the nearest copy), drops `node`, sorts by (distance, id) and cuts it to
// `max_occlusion_size`. For callers that copy the pool's rows first.
void PreparePrunePool(NodeId node, std::uint32_t max_occlusion_size, std::vector<Neighbor>* pool);

// Selects up to params.max_degree out-neighbours of `node` into `out`
// (cleared first), in ascending distance order.
// `pool`: candidates with their distance to `node` (any order; may contain
// duplicates and `node` itself, both dropped). On return it is sorted by
// (distance, id), deduplicated and cut to max_occlusion_size.
// Distances between candidates come from `vectors` (row ids = NodeIds).
// Returns the number of distance computations made. Thread-safe for distinct
// pool/scratch/out objects; `vectors` is only read.
std::uint64_t RobustPrune(NodeId node, std::vector<Neighbor>* pool, const PruneParams& params,
                          const VectorView& vectors, PruneScratch* scratch,
                          std::vector<NodeId>* out);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_ROBUST_PRUNE_H_
