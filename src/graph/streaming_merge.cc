#include "graph/streaming_merge.h"

#include <algorithm>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <string_view>

#include "base/parallel.h"
#include "base/timer.h"
#include "graph/adjacency.h"
#include "graph/medoid.h"
#include "graph/robust_prune.h"
#include "graph/vector_view.h"

namespace strata::graph {

VamanaBuildOptions StreamingMergeOptions::BuildOptions() const {
  return VamanaBuildOptions{.metric = metric,
                            .max_degree = max_degree,
                            .search_list_size = search_list_size,
                            .alpha = alpha,
                            .slack_factor = slack_factor,
                            .max_occlusion_size = max_occlusion_size,
                            .num_threads = num_threads,
                            .seed = seed,
                            .labels = labels,
                            .stop = stop};
}

Status StreamingMergeOptions::Validate() const {
  const Status s = BuildOptions().Validate();
  if (s.ok()) return s;
  // Same ranges as the build; name this struct in the message.
  std::string_view msg = s.message();
  constexpr std::string_view kPrefix = "VamanaBuildOptions: ";
  if (msg.substr(0, kPrefix.size()) == kPrefix) msg.remove_prefix(kPrefix.size());
  return Status::InvalidArgument("StreamingMergeOptions: " + std::string(msg));
}

namespace {

// Per-thread buffers of the delete phase.
struct DeleteWorker {
  std::vector<NodeId> candidates;  // merged ids
  std::vector<Neighbor> pool;
  std::vector<NodeId> pruned;
  PruneScratch prune;
  std::uint64_t distance_computations = 0;
  std::uint64_t repaired = 0;
};

class Merger {
 public:
  Merger(const VamanaGraph& old_graph, std::span<const std::uint8_t> deleted,
         std::span<const float> new_rows, std::size_t dim, const StreamingMergeOptions& o,
         StreamingMergeReport* report)
      : old_(old_graph),
        deleted_(deleted),
        new_rows_(new_rows),
        dim_(dim),
        o_(o),
        report_(*report),
        params_{.max_degree = o.max_degree,
                .alpha = o.alpha,
                .max_occlusion_size = o.max_occlusion_size,
                .schedule = AlphaSchedule::kRising,
                .saturate = false,
                .labels = o.labels.empty() ? nullptr : &o.labels} {}

  // `survivors`: old ids kept, ascending; `merged`: the merged rows.
  Result<VamanaGraph> Run(const std::vector<NodeId>& survivors, std::span<const float> merged);

 private:
  void ConsolidateDeletes(const std::vector<NodeId>& survivors, const VectorView& view,
                          FlatAdjacency* graph);

  const VamanaGraph& old_;
  std::span<const std::uint8_t> deleted_;
  std::span<const float> new_rows_;
  const std::size_t dim_;
  const StreamingMergeOptions& o_;
  StreamingMergeReport& report_;
  const PruneParams params_;
  std::uint32_t threads_ = 1;
  std::vector<NodeId> new_id_;  // old id -> merged id, kInvalidNode if deleted
};

void Merger::ConsolidateDeletes(const std::vector<NodeId>& survivors, const VectorView& view,
                                FlatAdjacency* graph) {
  const NodeId n_old = old_.size();
  const std::uint32_t r = o_.max_degree;
  std::vector<DeleteWorker> workers(threads_);
  ParallelFor(
      survivors.size(), threads_,
      [&](std::size_t k, unsigned t) {
        DeleteWorker& w = workers[t];
        const NodeId p_old = survivors[k];
        const auto p = static_cast<NodeId>(k);  // merged id
        w.candidates.clear();
        bool touched = false;
        for (const NodeId x : old_.Neighbors(p_old)) {
          if (x >= n_old || x == p_old) continue;
          if (new_id_[x] != kInvalidNode) {
            w.candidates.push_back(new_id_[x]);
            continue;
          }
          // x is deleted: its surviving out-neighbours stand in for it.
          touched = true;
          for (const NodeId y : old_.Neighbors(x)) {
            if (y < n_old && y != p_old && new_id_[y] != kInvalidNode) {
              w.candidates.push_back(new_id_[y]);
            }
          }
        }
        if (touched) {
          ++w.repaired;
          std::sort(w.candidates.begin(), w.candidates.end());
          w.candidates.erase(std::unique(w.candidates.begin(), w.candidates.end()),
                             w.candidates.end());
        }
        if (w.candidates.size() <= r) {
          // Untouched lists keep their order; a small consolidated set is kept
          // whole (no distance work), as DiskANN's consolidate_deletes does.
          graph->Set(p, w.candidates);
          return;
        }
        w.pool.clear();
        for (const NodeId c : w.candidates) w.pool.push_back({c, view.Distance(p, c)});
        w.distance_computations += w.pool.size();
        w.distance_computations += RobustPrune(p, &w.pool, params_, view, &w.prune, &w.pruned);
        graph->Set(p, w.pruned);
      },
      /*grain=*/64);
  for (const DeleteWorker& w : workers) {
    report_.delete_distance_computations += w.distance_computations;
    report_.nodes_repaired += w.repaired;
  }
}

Result<VamanaGraph> Merger::Run(const std::vector<NodeId>& survivors,
                                std::span<const float> merged) {
  Timer phase;
  const NodeId n_old = old_.size();
  const auto n_surv = static_cast<NodeId>(survivors.size());
  const std::size_t m = new_rows_.size() / dim_;
  STRATA_ASSIGN_OR_RETURN(VectorView view, VectorView::Create(merged, dim_, o_.metric));
  const NodeId n = view.size();
  threads_ = o_.num_threads == 0 ? DefaultThreads() : o_.num_threads;
  threads_ = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(threads_, 1, n));
  STRATA_RETURN_IF_ERROR(CheckRowValues(view, o_.metric, threads_, [&](std::uint64_t row) {
    return row < n_surv ? "StreamingMerge: old row " + std::to_string(survivors[row])
                        : "StreamingMerge: new row " + std::to_string(row - n_surv);
  }));

  new_id_.assign(n_old, kInvalidNode);
  for (NodeId k = 0; k < n_surv; ++k) new_id_[survivors[k]] = k;

  // 1. Delete consolidation, written into the merged numbering.
  STRATA_ASSIGN_OR_RETURN(FlatAdjacency graph,
                          FlatAdjacency::Create(n, o_.BuildOptions().SlackDegree()));
  ConsolidateDeletes(survivors, view, &graph);
  if (o_.stop.stop_requested()) return Status::Aborted("StreamingMerge: stopped on request");

  // 2. Entry point.
  const NodeId old_entry = old_.entry_point();
  NodeId entry = kInvalidNode;
  if (old_entry < n_old && new_id_[old_entry] != kInvalidNode) {
    entry = new_id_[old_entry];
  } else {
    report_.entry_replaced = true;
    STRATA_ASSIGN_OR_RETURN(
        VectorView surv_view,
        VectorView::Create(merged.first(static_cast<std::size_t>(n_surv) * dim_), dim_, o_.metric));
    entry = ComputeMedoid(surv_view, threads_);
  }
  report_.seconds_delete = phase.ElapsedSeconds();

  // 3. Inserts, in a seeded random order (Fisher-Yates with our own index
  // draw, as the build does, so the order does not depend on the library).
  phase.Reset();
  auto inserter = std::make_unique<VamanaInserter>(view, &graph, o_.search_list_size, threads_);
  std::vector<NodeId> insert_starts;
  if (!o_.labels.empty()) {
    // The inserts start from points among the surviving rows: a new row is
    // isolated until it is inserted, and a walk from it would find nothing.
    const NodeLabels surv_labels{o_.labels.offsets.first(n_surv + 1),
                                 o_.labels.labels.first(o_.labels.offsets[n_surv])};
    STRATA_ASSIGN_OR_RETURN(
        VectorView surv_view,
        VectorView::Create(merged.first(static_cast<std::size_t>(n_surv) * dim_), dim_, o_.metric));
    insert_starts = ComputeLabelStartPoints(surv_view, surv_labels, threads_);
    inserter->UseLabels(&o_.labels, insert_starts);
  }
  std::vector<NodeId> order(m);
  for (std::size_t i = 0; i < m; ++i) order[i] = n_surv + static_cast<NodeId>(i);
  std::mt19937_64 rng(o_.seed);
  for (std::size_t i = m; i > 1; --i) {
    const std::size_t k = static_cast<std::size_t>(rng() % i);
    std::swap(order[i - 1], order[k]);
  }
  inserter->Insert(order, entry, params_, nullptr, o_.stop);
  if (o_.stop.stop_requested()) return Status::Aborted("StreamingMerge: stopped on request");
  report_.seconds_insert = phase.ElapsedSeconds();

  // 4. Patch: lists above R (old lists that overflowed their slack were
  // already re-pruned during the inserts), then reachability.
  phase.Reset();
  inserter->PruneOverfull(params_);
  report_.connect = ConnectUnreachable(&graph, entry, view, o_.max_degree, o_.search_list_size);
  const InsertCounters c = inserter->Counters();
  report_.search_distance_computations = c.search_distance_computations;
  report_.prune_distance_computations = c.prune_distance_computations;
  report_.reverse_edge_prunes = c.reverse_edge_prunes;
  report_.patch_prunes = c.cleanup_prunes;
  inserter.reset();  // its searchers reference `graph`
  graph.ShrinkCapacity(o_.max_degree);
  report_.seconds_patch = phase.ElapsedSeconds();
  STRATA_ASSIGN_OR_RETURN(VamanaGraph g,
                          VamanaGraph::FromParts(std::move(graph), entry, o_.metric, o_.max_degree));
  // Searches start from points over all merged rows, every one now linked.
  if (!o_.labels.empty()) g.SetLabelStartPoints(ComputeLabelStartPoints(view, o_.labels, threads_));
  return g;
}

Result<VamanaGraph> MergeImpl(const VamanaGraph& old_graph, std::span<const float> old_rows,
                              std::span<const std::uint8_t> deleted,
                              std::span<const float> new_rows, std::size_t dim,
                              const StreamingMergeOptions& options,
                              std::vector<float>* merged_rows_out, StreamingMergeReport* report) {
  const NodeId n_old = old_graph.size();
  const std::size_t m = new_rows.size() / dim;
  std::vector<NodeId> survivors;
  survivors.reserve(n_old);
  for (NodeId i = 0; i < n_old; ++i) {
    if (deleted[i] == 0) survivors.push_back(i);
  }
  report->deleted = n_old - survivors.size();
  report->inserted = m;
  const std::size_t n = survivors.size() + m;
  if (n >= kInvalidNode) {
    return Status::InvalidArgument("StreamingMerge: " + std::to_string(n) +
                                   " merged rows exceed the uint32 id space");
  }

  // The merged rows: survivors in old order, then the new rows.
  std::vector<float> local;
  std::vector<float>& merged = merged_rows_out != nullptr ? *merged_rows_out : local;
  merged.resize(n * dim);
  for (std::size_t k = 0; k < survivors.size(); ++k) {
    std::copy_n(old_rows.data() + static_cast<std::size_t>(survivors[k]) * dim, dim,
                merged.data() + k * dim);
  }
  std::copy(new_rows.begin(), new_rows.end(),
            merged.begin() + static_cast<std::ptrdiff_t>(survivors.size() * dim));

  if (n == 0) {
    STRATA_ASSIGN_OR_RETURN(FlatAdjacency empty, FlatAdjacency::Create(0, options.max_degree));
    return VamanaGraph::FromParts(std::move(empty), kInvalidNode, options.metric,
                                  options.max_degree);
  }
  if (survivors.empty()) {
    // Nothing of the old graph is left: the merge is a build.
    report->rebuilt = true;
    report->entry_replaced = n_old > 0;
    Result<VamanaGraph> g = BuildVamana(merged, dim, options.BuildOptions());
    if (!g.ok()) {
      // BuildVamana names rows of `merged`, which are the new rows here.
      std::string msg = g.status().message();
      const std::string from = "BuildVamana: row ";
      if (msg.rfind(from, 0) == 0) msg = "StreamingMerge: new row " + msg.substr(from.size());
      return g.status().IsInvalidArgument() ? Status::InvalidArgument(msg) : g.status();
    }
    const BuildStats& s = g->build_stats();
    report->seconds_insert = s.seconds_total;
    report->search_distance_computations = s.search_distance_computations;
    report->prune_distance_computations = s.prune_distance_computations;
    report->reverse_edge_prunes = s.reverse_edge_prunes;
    report->patch_prunes = s.cleanup_prunes;
    report->connect = s.connect;
    return g;
  }
  if (report->deleted == 0 && m == 0 && old_graph.max_degree() <= options.max_degree) {
    // Nothing changes: a copy (after the same row checks as any merge).
    STRATA_ASSIGN_OR_RETURN(VectorView view, VectorView::Create(merged, dim, options.metric));
    STRATA_RETURN_IF_ERROR(CheckRowValues(
        view, options.metric, options.num_threads,
        [](std::uint64_t row) { return "StreamingMerge: old row " + std::to_string(row); }));
    report->copied = true;
    FlatAdjacency copy = old_graph.adjacency();
    STRATA_ASSIGN_OR_RETURN(VamanaGraph g,
                            VamanaGraph::FromParts(std::move(copy), old_graph.entry_point(),
                                                   options.metric, options.max_degree));
    if (!options.labels.empty()) {
      g.SetLabelStartPoints(ComputeLabelStartPoints(view, options.labels, options.num_threads));
    }
    return g;
  }
  Merger merger(old_graph, deleted, new_rows, dim, options, report);
  return merger.Run(survivors, merged);
}

}  // namespace

Result<VamanaGraph> StreamingMerge(const VamanaGraph& old_graph, std::span<const float> old_rows,
                                   std::span<const std::uint8_t> deleted,
                                   std::span<const float> new_rows, std::size_t dim,
                                   const StreamingMergeOptions& options,
                                   std::vector<float>* merged_rows_out,
                                   StreamingMergeReport* report) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  const std::size_t n_old = old_graph.size();
  if (dim == 0) return Status::InvalidArgument("StreamingMerge: dim must be > 0");
  if (old_rows.size() != n_old * dim) {
    return Status::InvalidArgument("StreamingMerge: old_rows has " +
                                   std::to_string(old_rows.size()) + " floats, expected " +
                                   std::to_string(n_old) + " rows x " + std::to_string(dim));
  }
  if (deleted.size() != n_old) {
    return Status::InvalidArgument("StreamingMerge: " + std::to_string(deleted.size()) +
                                   " delete flags for " + std::to_string(n_old) + " old rows");
  }
  if (new_rows.size() % dim != 0) {
    return Status::InvalidArgument("StreamingMerge: new_rows has " +
                                   std::to_string(new_rows.size()) +
                                   " floats, not a multiple of dim " + std::to_string(dim));
  }
  if (n_old > 0 && old_graph.metric() != options.metric) {
    return Status::InvalidArgument("StreamingMerge: options.metric differs from the old graph's");
  }
  if (!options.labels.empty()) {
    std::uint64_t survivors = 0;
    for (const std::uint8_t d : deleted) survivors += d == 0 ? 1 : 0;
    STRATA_RETURN_IF_ERROR(
        options.labels.Validate(survivors + new_rows.size() / dim).WithContext("StreamingMerge"));
  }
  const Timer total;
  StreamingMergeReport local;
  StreamingMergeReport* r = report != nullptr ? report : &local;
  *r = StreamingMergeReport{};
  // The merged rows and per-node arrays are the large allocations; report
  // exhaustion as a Status rather than letting bad_alloc escape.
  try {
    Result<VamanaGraph> g =
        MergeImpl(old_graph, old_rows, deleted, new_rows, dim, options, merged_rows_out, r);
    r->seconds_total = total.ElapsedSeconds();
    return g;
  } catch (const std::bad_alloc&) {
    return Status::Aborted("StreamingMerge: out of memory for " +
                           std::to_string(n_old + new_rows.size() / dim) + " rows at max_degree " +
                           std::to_string(options.max_degree));
  }
}

}  // namespace strata::graph
