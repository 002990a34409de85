// StreamingMerge: fold deletes and inserts into a Vamana graph without a
// rebuild — the graph compute of FreshDiskANN's merge, in memory.
//
// Singh et al., "FreshDiskANN: A Fast and Accurate Graph-Based ANN Index for
// Streaming Similarity Search", arXiv 2105.09613 (2021), Section 4 (delete
// consolidation, Algorithm 4; FreshVamana insert, Algorithm 2) and Section 5
// (StreamingMerge: delete, insert and patch phases). The paper streams the
// SSD graph block by block and collects reverse edges in a delta structure
// Δ; here the whole graph is in memory, so the phases are:
//  1. delete: for every surviving node p whose out-list holds a deleted node,
//     C = (N(p) \ D) ∪ ⋃_{d ∈ N(p) ∩ D} (N(d) \ D) \ {p}, and
//     N(p) = C if |C| <= R (as DiskANN's consolidate_deletes does) else
//     RobustPrune(p, C, alpha, R). Parallel; each p writes only its own list
//     and reads only its own and deleted nodes' lists, so no locks.
//     Lists are written straight into the merged numbering (survivors in old
//     order, then the new rows), so deleted ids vanish from the graph.
//  2. entry: the old entry point if it survives, else the medoid of the
//     survivors (medoid.h; the deleted entry's row is never read).
//  3. insert: each new row is inserted as the Vamana build inserts a node
//     (VamanaInserter, vamana_builder.h): greedy search from the entry with
//     list size L, RobustPrune of the expanded set, reverse edges appended
//     into the slack slots; a list that overflows its slack is re-pruned on
//     the spot. New rows go in a seeded random order, in parallel.
//  4. patch: every list still above R is re-pruned (the paper's patch phase
//     over Δ), then nodes unreachable from the entry point are linked in
//     (connectivity.h) and the slack slots are released.
// The result is a VamanaGraph like BuildVamana's: degrees <= R, no self-loops
// or duplicates, every node reachable from the entry point.
//
// Pure compute over spans: no file I/O.
#ifndef STRATA_GRAPH_STREAMING_MERGE_H_
#define STRATA_GRAPH_STREAMING_MERGE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "graph/connectivity.h"
#include "graph/graph_options.h"
#include "graph/vamana_builder.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::graph {

// Parameters of a merge. The graph-shape fields mean what they mean in
// VamanaBuildOptions (graph_options.h) and default to the same values, so a
// merged graph and a rebuilt one are comparable.
struct StreamingMergeOptions {
  // Distance; must equal the old graph's metric. kCosine rows (surviving and
  // new) must be unit-norm, checked as BuildVamana checks them.
  Metric metric = Metric::kL2;
  // R: the most out-neighbours a node keeps. Old lists longer than R (an old
  // graph built with a larger R) are pruned to R.
  std::uint32_t max_degree = 64;
  // L: candidate list size of the greedy search that inserts each new row
  // (and of the reachability repair).
  std::uint32_t search_list_size = 125;
  // Occlusion factor of every RobustPrune (delete consolidation, inserts, patch).
  float alpha = 1.2f;
  // Reverse-edge slack during the insert phase: floor(slack_factor * R) slots per list.
  float slack_factor = 1.3f;
  // C: RobustPrune considers only the nearest this many candidates. >= max_degree.
  std::uint32_t max_occlusion_size = 750;
  // Worker threads; 0 = all hardware threads. One thread = deterministic.
  std::uint32_t num_threads = 0;
  // Seeds the insertion order of the new rows (and of a full rebuild).
  std::uint64_t seed = 1;
  // A request to stop: the merge ends with Aborted soon after (as BuildVamana's).
  std::stop_token stop;
  // Labels of the merged rows (survivors in old order, then the new rows;
  // empty: none). Given, the merge is label-aware as BuildVamana with labels
  // is (FilteredVamana's inserts and prunes), and the merged graph gets
  // start points per label computed over the merged rows. Not owned.
  NodeLabels labels;

  // InvalidArgument naming the first bad field (the ranges of VamanaBuildOptions).
  Status Validate() const;
  // The build options with the same graph shape: used when every old row is
  // deleted (the merge is then a plain BuildVamana over the new rows), and by
  // callers that want a comparable rebuild.
  VamanaBuildOptions BuildOptions() const;
};

// Where a merge spent its time and work.
struct StreamingMergeReport {
  double seconds_total = 0.0;
  double seconds_delete = 0.0;       // row checks, merged rows, delete consolidation, entry point
  double seconds_insert = 0.0;       // insert phase (or the whole build when rebuilt)
  double seconds_patch = 0.0;        // prune of lists above R, reachability repair
  std::uint64_t deleted = 0;         // old rows dropped
  std::uint64_t inserted = 0;        // new rows added
  std::uint64_t nodes_repaired = 0;  // surviving nodes whose list held a deleted node
  std::uint64_t delete_distance_computations = 0;  // scoring + RobustPrune in phase 1
  std::uint64_t search_distance_computations = 0;  // insert searches
  std::uint64_t prune_distance_computations = 0;   // insert/reverse-edge/patch prunes
  std::uint64_t reverse_edge_prunes = 0;           // slack lists that overflowed during inserts
  std::uint64_t patch_prunes = 0;                  // lists above R re-pruned after the inserts
  bool entry_replaced = false;                     // the old entry point was deleted
  bool rebuilt = false;  // every old row was deleted: BuildVamana over the new rows
  bool copied = false;   // nothing to do: the old graph was copied
  ConnectReport connect;
};

// Merges deletes and inserts into `old_graph` and returns the graph over the
// merged rows, numbered: first the surviving old rows in increasing old-row
// order, then the new rows in order. Global ids (ShardIds) are not carried
// over: the result numbers nodes 0..size-1 and the caller keeps the mapping.
//
// old_graph: built over `old_rows` (n_old * dim float32, row-major, n_old =
//   old_graph.size()); rows of deleted nodes may hold anything and are never
//   read. Neighbour ids >= n_old in old lists are ignored.
// deleted: n_old flags, non-zero = delete that row.
// new_rows: m * dim float32, row-major (m may be 0).
// merged_rows_out: if non-null, receives the merged rows in the result's
//   numbering ((n_old - deleted + m) * dim floats); must not alias the inputs.
// report: if non-null, receives timings and counts.
// Cases: nothing deleted and m == 0 → a copy of the old graph (its entry,
//   lists and capacity) when its max_degree is <= R (else lists are pruned
//   to R); every row deleted → BuildVamana over the new rows with
//   options.BuildOptions(); every row deleted and m == 0 → an empty graph
//   (size 0, entry kInvalidNode).
// Errors: InvalidArgument for bad options, dim == 0, mismatched sizes, a
//   metric other than the old graph's, more than 2^32 - 2 merged rows, or a
//   merged row with a NaN/infinite value or (kCosine) not unit-norm — the
//   message names it as "old row i" or "new row j"; Aborted if memory runs
//   out. Inputs are only read; thread-safe for distinct outputs.
// Memory: the merged rows ((n_old - deleted + m) * dim floats, held in
//   *merged_rows_out when given) plus 4 * (floor(slack * R) + 1) bytes per
//   merged node during the merge, 4 * (R + 1) after.
Result<VamanaGraph> StreamingMerge(const VamanaGraph& old_graph, std::span<const float> old_rows,
                                   std::span<const std::uint8_t> deleted,
                                   std::span<const float> new_rows, std::size_t dim,
                                   const StreamingMergeOptions& options,
                                   std::vector<float>* merged_rows_out = nullptr,
                                   StreamingMergeReport* report = nullptr);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_STREAMING_MERGE_H_
