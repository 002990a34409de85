// In-memory Vamana graph construction (DiskANN's graph).
//
// Subramanya et al., "DiskANN: Fast Accurate Billion-point Nearest Neighbor
// Search on a Single Node", NeurIPS 2019 (Algorithm 3), following the
// reference implementation (microsoft/DiskANN index.cpp) where it differs:
//  - entry point: the row nearest the centroid (medoid.h);
//  - nodes are inserted in a seeded random order; for each node p a greedy
//    search for p with list size L_build yields the expanded nodes V, and
//    N(p) = RobustPrune(p, V ∪ N(p), alpha, R) (robust_prune.h);
//  - reverse edges with slack: for each new neighbour j, p is appended to N(j)
//    while |N(j)| < floor(slack * R); only a full list is re-pruned to R;
//  - a final cleanup prunes every list still above R, then nodes unreachable
//    from the entry point are linked in (connectivity.h), and the slack slots
//    are released so the finished graph holds exactly R slots per node.
// Parallel over nodes with one spinlock per node; locks are never held during
// distance computations. One thread = deterministic for a seed.
//
// Shard seam. Node ids are uint32 inside one in-memory build. Bases that do
// not fit (in RAM or in 2^32 ids) are built as DiskANN does: partition into
// overlapping clusters (each point in its 2 nearest), gather each shard's rows
// into one span, BuildVamana(rows, dim, options, progress, ShardIds{ids}) with
// the shard's global ids, then merge per global node the union of its shard
// lists (VamanaGraph::AppendGlobalNeighbors gives them in global ids). The
// partitioner belongs to the disk-layout modules; the graph compute of
// FreshDiskANN's streaming merge is streaming_merge.h.
//
// Pure compute over spans: no file I/O.
#ifndef STRATA_GRAPH_VAMANA_BUILDER_H_
#define STRATA_GRAPH_VAMANA_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/adjacency.h"
#include "graph/connectivity.h"
#include "graph/graph_options.h"
#include "graph/graph_stats.h"
#include "graph/greedy_search.h"
#include "graph/neighbor.h"
#include "graph/robust_prune.h"
#include "graph/spin_lock.h"
#include "graph/vector_view.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::graph {

// Which global vector ids the rows of one build shard stand for.
struct ShardIds {
  // Global id of row i when `ids` is empty: offset + i.
  VectorId offset = 0;
  // Otherwise ids[i] is row i's global id (size must equal the row count;
  // copied into the graph, so the span need only live through the build).
  std::span<const VectorId> ids{};
};

// Where a build spent its time and work.
struct BuildStats {
  double seconds_total = 0.0;
  double seconds_medoid = 0.0;
  double seconds_passes = 0.0;   // insertion passes (search + prune + reverse edges)
  double seconds_cleanup = 0.0;  // final prune of lists above R
  double seconds_connect = 0.0;  // reachability repair
  std::uint64_t search_distance_computations = 0;
  std::uint64_t prune_distance_computations = 0;  // incl. scoring lists before re-prunes
  std::uint64_t reverse_edge_prunes = 0;  // slack lists that overflowed and were re-pruned
  std::uint64_t cleanup_prunes = 0;
  ConnectReport connect;
};

// A finished in-memory graph: adjacency with R slots per node, entry point,
// metric and the shard's id mapping. Does not hold the vectors (search with a
// VectorView over the same rows). Immutable after the build; safe to read
// from many threads. Movable, not copyable.
class VamanaGraph {
 public:
  VamanaGraph() = default;
  VamanaGraph(VamanaGraph&&) = default;
  VamanaGraph& operator=(VamanaGraph&&) = default;
  VamanaGraph(const VamanaGraph&) = delete;
  VamanaGraph& operator=(const VamanaGraph&) = delete;

  // Assembles a graph from parts (loaders, tests). InvalidArgument if the
  // entry point is out of range, a degree exceeds max_degree, or ids.ids is
  // non-empty with a size other than adjacency.size().
  static Result<VamanaGraph> FromParts(FlatAdjacency adjacency, NodeId entry_point, Metric metric,
                                       std::uint32_t max_degree, ShardIds ids = {});

  NodeId size() const { return adjacency_.size(); }
  std::uint32_t max_degree() const { return max_degree_; }
  NodeId entry_point() const { return entry_point_; }
  Metric metric() const { return metric_; }
  const FlatAdjacency& adjacency() const { return adjacency_; }
  std::span<const NodeId> Neighbors(NodeId i) const { return adjacency_.Neighbors(i); }

  // Global id of local node i (i < size()).
  VectorId GlobalId(NodeId i) const {
    return global_ids_.empty() ? id_offset_ + i : global_ids_[i];
  }
  // Appends node i's neighbours as global ids to `out` (for shard merging).
  void AppendGlobalNeighbors(NodeId i, std::vector<VectorId>* out) const;

  // A label build's start point per label (index = label; kInvalidNode
  // where no row carries it); empty for an ordinary build.
  const std::vector<NodeId>& label_start_points() const { return label_start_points_; }
  // Sets them (a merge that computes them over its merged rows).
  void SetLabelStartPoints(std::vector<NodeId> starts) { label_start_points_ = std::move(starts); }

  // Statistics of the build that produced this graph (zeros for FromParts).
  const BuildStats& build_stats() const { return build_stats_; }
  // Degree / reachability statistics (O(n + edges)).
  GraphStats Stats() const { return ComputeGraphStats(adjacency_, entry_point_); }
  // Bytes held (adjacency + id mapping).
  std::size_t MemoryBytes() const {
    return adjacency_.MemoryBytes() + global_ids_.capacity() * sizeof(VectorId);
  }

 private:
  friend class VamanaBuilder;  // the build (vamana_builder.cc) fills the fields directly
  FlatAdjacency adjacency_;
  NodeId entry_point_ = kInvalidNode;
  Metric metric_ = Metric::kL2;
  std::uint32_t max_degree_ = 0;
  VectorId id_offset_ = 0;
  std::vector<VectorId> global_ids_;
  std::vector<NodeId> label_start_points_;
  BuildStats build_stats_;
};

// Reports build progress as a fraction in [0, 1], non-decreasing, ending with
// exactly 1.0 on success. Called from build threads but never concurrently;
// should return quickly.
using BuildProgressFn = std::function<void(double fraction)>;

// Builds a Vamana graph over `rows` (size n * dim, row-major float32, not
// retained; n >= 1). Errors: InvalidArgument for bad options (Validate), a
// shape mismatch, n >= 2^32 - 1, a non-finite value (names the row), a row
// that is not unit-norm under kCosine (|‖x‖² - 1| > 1e-3), or an id mapping of
// the wrong size; Aborted if memory cannot be allocated.
// Memory: 4 * (floor(slack * R) + 1) bytes per node during the build, 4 * (R + 1)
// after, plus per-thread scratch of O(L * R).
Result<VamanaGraph> BuildVamana(std::span<const float> rows, std::size_t dim,
                                const VamanaBuildOptions& options,
                                const BuildProgressFn& progress = nullptr, ShardIds ids = {});

// Greedy search over a finished graph from its entry point (see
// greedy_search.h): the best k of a list of size max(list_size, k), with hop
// and distance counts. `vectors` must view the rows the graph was built on
// with the graph's metric (InvalidArgument otherwise, or for a bad query
// size, k == 0 or list_size == 0). Allocates a GraphSearcher per call; use
// GraphSearcher directly for many queries.
Result<GreedySearchResult> GreedySearch(const VamanaGraph& graph, const VectorView& vectors,
                                        std::span<const float> query, std::uint32_t list_size,
                                        std::uint32_t k);

// A filtered search of a label build (Filtered-DiskANN's FilteredGreedySearch):
// from the start points of the `required` labels (sorted, unique; AND), only
// nodes carrying every one of them are scored; the best k of them are
// returned. `labels` must be the build's. InvalidArgument as GreedySearch,
// or when the graph was not built with labels, `required` is empty or
// unsorted. No result (not an error) when no node passes.
Result<GreedySearchResult> FilteredGreedySearch(const VamanaGraph& graph,
                                                const VectorView& vectors,
                                                const NodeLabels& labels,
                                                std::span<const float> query,
                                                std::span<const std::uint32_t> required,
                                                std::uint32_t list_size, std::uint32_t k);

// ---------------------------------------------------------------------------
// Building blocks of BuildVamana shared with StreamingMerge (streaming_merge.h),
// so that a merge inserts, re-prunes and validates exactly as a build does.
// Internal to the graph module.

// Checks the values of every row of `vectors` before a build: a NaN would
// silently poison every comparison involving its row. InvalidArgument for the
// lowest row with a NaN or infinite value, else (kCosine only) for the lowest
// row with |‖x‖² - 1| > 1e-3; `row_name(i)` names row i in the message (e.g.
// "BuildVamana: row 7"). Parallel over `num_threads` (0 = all cores).
Status CheckRowValues(const VectorView& vectors, Metric metric, std::uint32_t num_threads,
                      const std::function<std::string(std::uint64_t row)>& row_name);

// Work done by a VamanaInserter, summed over its threads.
struct InsertCounters {
  std::uint64_t search_distance_computations = 0;
  std::uint64_t prune_distance_computations = 0;  // incl. scoring lists before re-prunes
  std::uint64_t reverse_edge_prunes = 0;  // slack lists that overflowed and were re-pruned
  std::uint64_t cleanup_prunes = 0;       // lists PruneOverfull cut back to R
};

// The insertion step of the Vamana build over a graph under construction.
// Inserting node p: greedy search for p's row from the entry point with list
// size L, N(p) = RobustPrune(p, expanded ∪ N(p)), then for each new neighbour
// j, p is appended to N(j) while N(j) has a free slot (the graph's capacity
// above R is the slack); only a full list is re-pruned to R. Parallel over
// nodes with one spinlock per node, never held during distance computations.
// The graph and vectors are borrowed and must outlive the inserter; the graph
// must not be touched by others while Insert or PruneOverfull runs.
class VamanaInserter {
 public:
  // `graph`: one list per row of `vectors` (graph->size() == vectors.size()),
  // capacity() >= the max_degree of every prune (the extra slots are the
  // slack). `num_threads` >= 1. Allocates graph->size() locks and per-thread
  // scratch (may throw std::bad_alloc).
  VamanaInserter(const VectorView& vectors, FlatAdjacency* graph, std::uint32_t search_list_size,
                 std::uint32_t num_threads);
  ~VamanaInserter();
  VamanaInserter(const VamanaInserter&) = delete;
  VamanaInserter& operator=(const VamanaInserter&) = delete;

  // Makes every later insert label-aware (FilteredVamana): a node with
  // labels is searched for from `start_points` of its labels (index =
  // label) among the nodes sharing a label with it; a node without labels
  // as before. Prunes are label-aware when their params carry the labels.
  // Both are borrowed.
  void UseLabels(const NodeLabels* labels, std::span<const NodeId> start_points);

  // Inserts the nodes of `order` (distinct ids < graph size) from `entry`,
  // taking chunks of 16 in order (one thread = exactly this order, so
  // deterministic). `on_done(count)`, if set, is called after each insert
  // with the number done so far, concurrently from the worker threads. Once
  // `stop` is requested the workers insert no further node (the caller
  // checks the token and abandons the graph).
  void Insert(std::span<const NodeId> order, NodeId entry, const PruneParams& params,
              const std::function<void(std::uint64_t done)>& on_done = nullptr,
              std::stop_token stop = {});

  // Re-prunes every list longer than params.max_degree down to it (the
  // build's final cleanup; the merge's patch of overflowing lists).
  void PruneOverfull(const PruneParams& params);

  InsertCounters Counters() const;

 private:
  struct Worker;
  void InsertNode(NodeId p, NodeId entry, const PruneParams& params, Worker& w);
  void AddReverseEdge(NodeId j, NodeId p, const PruneParams& params, Worker& w);

  const VectorView& v_;
  FlatAdjacency& graph_;
  const std::uint32_t search_list_size_;
  const std::uint32_t threads_;
  const std::uint32_t slack_;  // graph capacity: list length allowed between prunes
  std::unique_ptr<SpinLock[]> locks_;
  std::vector<std::unique_ptr<Worker>> workers_;
  const NodeLabels* labels_ = nullptr;
  std::span<const NodeId> label_start_points_;
};

}  // namespace strata::graph

#endif  // STRATA_GRAPH_VAMANA_BUILDER_H_
