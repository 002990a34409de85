#include "graph/vamana_builder.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <random>
#include <string>

#include "base/parallel.h"
#include "base/timer.h"
#include "graph/greedy_search.h"
#include "graph/medoid.h"
#include "graph/robust_prune.h"
#include "graph/spin_lock.h"
#include "graph/vector_view.h"

namespace strata::graph {

void VamanaGraph::AppendGlobalNeighbors(NodeId i, std::vector<VectorId>* out) const {
  for (const NodeId m : adjacency_.Neighbors(i)) out->push_back(GlobalId(m));
}

Result<VamanaGraph> VamanaGraph::FromParts(FlatAdjacency adjacency, NodeId entry_point,
                                           Metric metric, std::uint32_t max_degree,
                                           ShardIds ids) {
  const NodeId n = adjacency.size();
  if (n > 0 && entry_point >= n) {
    return Status::InvalidArgument("VamanaGraph: entry point " + std::to_string(entry_point) +
                                   " out of range for " + std::to_string(n) + " nodes");
  }
  for (NodeId i = 0; i < n; ++i) {
    if (adjacency.Degree(i) > max_degree) {
      return Status::InvalidArgument("VamanaGraph: node " + std::to_string(i) + " has degree " +
                                     std::to_string(adjacency.Degree(i)) + " > max_degree " +
                                     std::to_string(max_degree));
    }
  }
  if (!ids.ids.empty() && ids.ids.size() != n) {
    return Status::InvalidArgument("VamanaGraph: id mapping has " +
                                   std::to_string(ids.ids.size()) + " ids for " +
                                   std::to_string(n) + " nodes");
  }
  VamanaGraph g;
  g.adjacency_ = std::move(adjacency);
  g.entry_point_ = entry_point;
  g.metric_ = metric;
  g.max_degree_ = max_degree;
  g.id_offset_ = ids.offset;
  g.global_ids_.assign(ids.ids.begin(), ids.ids.end());
  return g;
}

// Per-thread buffers and counters; reused across every node a thread inserts.
struct VamanaInserter::Worker {
  Worker(const VectorView& v, const FlatAdjacency& g, SpinLock* locks) : searcher(v, g, locks) {}
  GraphSearcher searcher;
  std::vector<Neighbor> pool;
  std::vector<NodeId> pruned;      // new list of the node being inserted
  std::vector<Neighbor> rev_pool;  // reverse-edge re-prune of a neighbour
  std::vector<NodeId> rev_pruned;
  std::vector<NodeId> snapshot;
  std::vector<NodeId> entries;  // a label insert's start points
  PruneScratch prune;
  std::uint64_t search_dc = 0;
  std::uint64_t prune_dc = 0;
  std::uint64_t reverse_prunes = 0;
  std::uint64_t cleanup_prunes = 0;
};

namespace {

bool SameList(std::span<const NodeId> a, const std::vector<NodeId>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

// FilteredVamana's insert search: the nodes sharing a label with `node`.
class SharesLabelWith final : public NodePredicate {
 public:
  SharesLabelWith(const NodeLabels& labels, NodeId node) : labels_(labels), node_(node) {}
  bool Accept(NodeId m) const override { return labels_.Share(node_, m); }

 private:
  const NodeLabels& labels_;
  NodeId node_;
};

// A filtered query: the nodes carrying every required label.
class HasAllLabels final : public NodePredicate {
 public:
  HasAllLabels(const NodeLabels& labels, std::span<const std::uint32_t> required)
      : labels_(labels), required_(required) {}
  bool Accept(NodeId m) const override { return labels_.HasAll(m, required_); }

 private:
  const NodeLabels& labels_;
  std::span<const std::uint32_t> required_;
};

}  // namespace

Status CheckRowValues(const VectorView& v, Metric metric, std::uint32_t threads,
                      const std::function<std::string(std::uint64_t row)>& row_name) {
  std::atomic<std::uint64_t> bad_nonfinite{std::numeric_limits<std::uint64_t>::max()};
  std::atomic<std::uint64_t> bad_norm{std::numeric_limits<std::uint64_t>::max()};
  auto atomic_min = [](std::atomic<std::uint64_t>& a, std::uint64_t x) {
    std::uint64_t cur = a.load(std::memory_order_relaxed);
    while (x < cur && !a.compare_exchange_weak(cur, x, std::memory_order_relaxed)) {
    }
  };
  ParallelForChunks(v.size(), threads, 4096, [&](std::size_t b, std::size_t e, unsigned) {
    for (std::size_t i = b; i < e; ++i) {
      const float* row = v.Row(static_cast<NodeId>(i));
      double norm = 0.0;
      bool finite = true;
      for (std::size_t j = 0; j < v.dim(); ++j) {
        finite &= std::isfinite(row[j]);
        norm += static_cast<double>(row[j]) * row[j];
      }
      if (!finite) {
        atomic_min(bad_nonfinite, i);
        return;
      }
      if (metric == Metric::kCosine && std::abs(norm - 1.0) > 1e-3) atomic_min(bad_norm, i);
    }
  });
  if (bad_nonfinite.load() != std::numeric_limits<std::uint64_t>::max()) {
    return Status::InvalidArgument(row_name(bad_nonfinite.load()) +
                                   " has a NaN or infinite value");
  }
  if (bad_norm.load() != std::numeric_limits<std::uint64_t>::max()) {
    return Status::InvalidArgument(row_name(bad_norm.load()) +
                                   " is not unit-norm; normalise rows before a cosine build");
  }
  return Status::OK();
}

VamanaInserter::VamanaInserter(const VectorView& vectors, FlatAdjacency* graph,
                               std::uint32_t search_list_size, std::uint32_t num_threads)
    : v_(vectors),
      graph_(*graph),
      search_list_size_(search_list_size),
      threads_(std::max<std::uint32_t>(num_threads, 1)),
      slack_(graph->capacity()),
      locks_(new SpinLock[graph->size()]) {
  for (std::uint32_t t = 0; t < threads_; ++t) {
    workers_.push_back(std::make_unique<Worker>(v_, graph_, locks_.get()));
  }
}

VamanaInserter::~VamanaInserter() = default;

InsertCounters VamanaInserter::Counters() const {
  InsertCounters c;
  for (const auto& w : workers_) {
    c.search_distance_computations += w->search_dc;
    c.prune_distance_computations += w->prune_dc;
    c.reverse_edge_prunes += w->reverse_prunes;
    c.cleanup_prunes += w->cleanup_prunes;
  }
  return c;
}

void VamanaInserter::UseLabels(const NodeLabels* labels, std::span<const NodeId> start_points) {
  labels_ = labels;
  label_start_points_ = start_points;
}

void VamanaInserter::InsertNode(NodeId p, NodeId entry, const PruneParams& params, Worker& w) {
  w.entries.clear();
  if (labels_ != nullptr) {
    for (const std::uint32_t l : labels_->Of(p)) {
      if (l < label_start_points_.size() && label_start_points_[l] != kInvalidNode) {
        w.entries.push_back(label_start_points_[l]);
      }
    }
  }
  if (w.entries.empty()) {
    w.entries.push_back(entry);
    w.search_dc += w.searcher.Search(v_.Row(p), w.entries, search_list_size_, &w.pool)
                       .distance_computations;
  } else {
    // FilteredVamana: only nodes sharing a label with p are candidates, so
    // each of p's labels gains edges among its own nodes.
    const SharesLabelWith accept(*labels_, p);
    w.search_dc += w.searcher.Search(v_.Row(p), w.entries, search_list_size_, &w.pool, &accept)
                       .distance_computations;
  }
  // The paper prunes V ∪ N_out(p). In the first pass N(p) holds reverse edges
  // other nodes gave p; in a second pass, p's previous list. Most are already
  // in V; RobustPrune drops the duplicates.
  {
    std::lock_guard<SpinLock> guard(locks_[p]);
    const auto nb = graph_.Neighbors(p);
    w.snapshot.assign(nb.begin(), nb.end());
  }
  for (const NodeId j : w.snapshot) w.pool.push_back({j, v_.Distance(p, j)});
  w.prune_dc += w.snapshot.size();
  w.prune_dc += RobustPrune(p, &w.pool, params, v_, &w.prune, &w.pruned);
  {
    std::lock_guard<SpinLock> guard(locks_[p]);
    const auto cur = graph_.Neighbors(p);
    if (!SameList(cur, w.snapshot)) {
      // Reverse edges arrived while p was being pruned: keep them in the
      // slack slots rather than losing them (DiskANN drops them).
      for (const NodeId x : cur) {
        if (w.pruned.size() >= slack_) break;
        if (std::find(w.snapshot.begin(), w.snapshot.end(), x) == w.snapshot.end() &&
            std::find(w.pruned.begin(), w.pruned.end(), x) == w.pruned.end()) {
          w.pruned.push_back(x);
        }
      }
    }
    graph_.Set(p, w.pruned);
  }
  for (const NodeId j : w.pruned) AddReverseEdge(j, p, params, w);
}

void VamanaInserter::AddReverseEdge(NodeId j, NodeId p, const PruneParams& params, Worker& w) {
  // Retry when another thread rewrote N(j) while we pruned a copy; after two
  // conflicts take our result (DiskANN always does), which at worst loses a
  // concurrent update of one list.
  for (int attempt = 0;; ++attempt) {
    {
      std::lock_guard<SpinLock> guard(locks_[j]);
      if (graph_.Contains(j, p)) return;
      if (graph_.Append(j, p)) return;  // slack left: no prune (DefraDB's DISKANN fix)
      const auto nb = graph_.Neighbors(j);
      w.snapshot.assign(nb.begin(), nb.end());
    }
    // Full at the slack capacity: re-prune N(j) ∪ {p} down to R, unlocked.
    w.rev_pool.clear();
    w.rev_pool.push_back({p, v_.Distance(j, p)});
    for (const NodeId x : w.snapshot) w.rev_pool.push_back({x, v_.Distance(j, x)});
    w.prune_dc += w.rev_pool.size();
    w.prune_dc += RobustPrune(j, &w.rev_pool, params, v_, &w.prune, &w.rev_pruned);
    ++w.reverse_prunes;
    std::lock_guard<SpinLock> guard(locks_[j]);
    if (attempt >= 2 || SameList(graph_.Neighbors(j), w.snapshot)) {
      graph_.Set(j, w.rev_pruned);
      return;
    }
  }
}

void VamanaInserter::Insert(std::span<const NodeId> order, NodeId entry, const PruneParams& params,
                            const std::function<void(std::uint64_t done)>& on_done,
                            std::stop_token stop) {
  std::atomic<std::uint64_t> done{0};
  ParallelForChunks(order.size(), threads_, /*grain=*/16,
                    [&](std::size_t b, std::size_t e, unsigned t) {
                      Worker& w = *workers_[t];
                      // Checked per insert: one thread's chunk may be the whole order.
                      for (std::size_t i = b; i < e && !stop.stop_requested(); ++i) {
                        InsertNode(order[i], entry, params, w);
                        const std::uint64_t d = done.fetch_add(1, std::memory_order_relaxed) + 1;
                        if (on_done) on_done(d);
                      }
                    });
}

void VamanaInserter::PruneOverfull(const PruneParams& params) {
  // No other writer runs now, so no locks: each node is pruned by one thread
  // and only its own list is written.
  ParallelFor(
      v_.size(), threads_,
      [&](std::size_t i, unsigned t) {
        const auto p = static_cast<NodeId>(i);
        if (graph_.Degree(p) <= params.max_degree) return;
        Worker& w = *workers_[t];
        w.rev_pool.clear();
        for (const NodeId x : graph_.Neighbors(p)) w.rev_pool.push_back({x, v_.Distance(p, x)});
        w.prune_dc += w.rev_pool.size();
        w.prune_dc += RobustPrune(p, &w.rev_pool, params, v_, &w.prune, &w.rev_pruned);
        ++w.cleanup_prunes;
        graph_.Set(p, w.rev_pruned);
      },
      /*grain=*/256);
}

// The build state shared by all threads. Declared a friend of VamanaGraph.
class VamanaBuilder {
 public:
  VamanaBuilder(const VectorView& v, const VamanaBuildOptions& o, const BuildProgressFn& progress)
      : v_(v), o_(o), progress_(progress), slack_(o.SlackDegree()) {}

  Result<VamanaGraph> Run(ShardIds ids);

 private:
  PruneParams Params(float alpha) const {
    return PruneParams{.max_degree = o_.max_degree,
                       .alpha = alpha,
                       .max_occlusion_size = o_.max_occlusion_size,
                       .schedule = o_.alpha_schedule,
                       .saturate = o_.saturate_graph,
                       .labels = o_.labels.empty() ? nullptr : &o_.labels};
  }
  void RunPass(VamanaInserter& inserter, std::uint64_t seed, const PruneParams& params,
               double p_begin, double p_end);
  void Report(double fraction);

  const VectorView& v_;
  const VamanaBuildOptions& o_;
  const BuildProgressFn& progress_;
  const std::uint32_t slack_;  // list capacity during the build
  std::uint32_t threads_ = 1;
  NodeId entry_ = kInvalidNode;
  std::vector<NodeId> label_start_points_;
  FlatAdjacency graph_;
  std::mutex progress_mu_;
  double last_progress_ = -1.0;  // GUARDED_BY(progress_mu_)
};

void VamanaBuilder::Report(double fraction) {
  if (!progress_) return;
  // try_lock: a thread never waits on another's callback; a skipped report
  // is superseded by the next one.
  std::unique_lock<std::mutex> lock(progress_mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  fraction = std::clamp(fraction, 0.0, 1.0);
  if (fraction <= last_progress_) return;
  last_progress_ = fraction;
  progress_(fraction);
}

void VamanaBuilder::RunPass(VamanaInserter& inserter, std::uint64_t seed,
                            const PruneParams& params, double p_begin, double p_end) {
  const NodeId n = v_.size();
  // Fisher-Yates with our own index draw: std::shuffle's use of the engine is
  // implementation-defined, which would make graphs differ across standard
  // libraries for the same seed.
  std::vector<NodeId> order(n);
  for (NodeId i = 0; i < n; ++i) order[i] = i;
  std::mt19937_64 rng(seed);
  for (std::size_t i = n; i > 1; --i) {
    const std::size_t k = static_cast<std::size_t>(rng() % i);
    std::swap(order[i - 1], order[k]);
  }
  const std::uint64_t report_every = std::max<std::uint64_t>(1, n / 1000);
  inserter.Insert(order, entry_, params, [&](std::uint64_t d) {
    if (d % report_every == 0) {
      Report(p_begin + (p_end - p_begin) * static_cast<double>(d) / static_cast<double>(n));
    }
  }, o_.stop);
}

Result<VamanaGraph> VamanaBuilder::Run(ShardIds ids) {
  const Timer total;
  BuildStats stats;
  const NodeId n = v_.size();
  threads_ = o_.num_threads == 0 ? DefaultThreads() : o_.num_threads;
  threads_ = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(threads_, 1, n));
  STRATA_RETURN_IF_ERROR(CheckRowValues(v_, o_.metric, threads_, [](std::uint64_t row) {
    return "BuildVamana: row " + std::to_string(row);
  }));

  Timer phase;
  entry_ = ComputeMedoid(v_, threads_);
  if (!o_.labels.empty()) label_start_points_ = ComputeLabelStartPoints(v_, o_.labels, threads_);
  stats.seconds_medoid = phase.ElapsedSeconds();
  Report(0.0);

  STRATA_ASSIGN_OR_RETURN(graph_, FlatAdjacency::Create(n, slack_));
  // Its searchers reference graph_: dropped before graph_ is moved out.
  auto inserter = std::make_unique<VamanaInserter>(v_, &graph_, o_.search_list_size, threads_);
  if (!o_.labels.empty()) inserter->UseLabels(&o_.labels, label_start_points_);

  // 1 pass: prune with alpha (DiskANN). 2 passes: alpha 1 then alpha (the
  // paper: a sparse, RNG-like graph first, long edges added in the second).
  phase.Reset();
  std::mt19937_64 seeder(o_.seed);
  constexpr double kPassShare = 0.97;
  for (std::uint32_t pass = 0; pass < o_.num_passes; ++pass) {
    const bool last = pass + 1 == o_.num_passes;
    const PruneParams params = Params(last ? o_.alpha : 1.0f);
    RunPass(*inserter, seeder(), params,
            kPassShare * pass / o_.num_passes, kPassShare * (pass + 1) / o_.num_passes);
    if (o_.stop.stop_requested()) return Status::Aborted("BuildVamana: stopped on request");
    if (!last) inserter->PruneOverfull(params);
  }
  stats.seconds_passes = phase.ElapsedSeconds();

  phase.Reset();
  inserter->PruneOverfull(Params(o_.alpha));
  stats.seconds_cleanup = phase.ElapsedSeconds();
  Report(0.98);

  phase.Reset();
  if (o_.connect_unreachable) {
    stats.connect = ConnectUnreachable(&graph_, entry_, v_, o_.max_degree, o_.search_list_size);
  } else {
    const auto seen = ReachableFrom(graph_, entry_);
    stats.connect.unreachable_before = static_cast<std::uint64_t>(
        std::count(seen.begin(), seen.end(), 0));
    stats.connect.unreachable_after = stats.connect.unreachable_before;
  }
  stats.seconds_connect = phase.ElapsedSeconds();

  const InsertCounters counters = inserter->Counters();
  stats.search_distance_computations = counters.search_distance_computations;
  stats.prune_distance_computations = counters.prune_distance_computations;
  stats.reverse_edge_prunes = counters.reverse_edge_prunes;
  stats.cleanup_prunes = counters.cleanup_prunes;
  inserter.reset();
  // Every list is now <= R: release the slack slots (83 -> 64 words per node at R = 64).
  graph_.ShrinkCapacity(o_.max_degree);

  VamanaGraph g;
  g.adjacency_ = std::move(graph_);
  g.entry_point_ = entry_;
  g.metric_ = o_.metric;
  g.max_degree_ = o_.max_degree;
  g.id_offset_ = ids.offset;
  g.global_ids_.assign(ids.ids.begin(), ids.ids.end());
  g.label_start_points_ = std::move(label_start_points_);
  stats.seconds_total = total.ElapsedSeconds();
  g.build_stats_ = stats;
  Report(1.0);
  return g;
}

Result<VamanaGraph> BuildVamana(std::span<const float> rows, std::size_t dim,
                                const VamanaBuildOptions& options,
                                const BuildProgressFn& progress, ShardIds ids) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  STRATA_ASSIGN_OR_RETURN(VectorView view, VectorView::Create(rows, dim, options.metric));
  if (view.size() == 0) return Status::InvalidArgument("BuildVamana: no rows");
  if (!options.labels.empty()) {
    STRATA_RETURN_IF_ERROR(options.labels.Validate(view.size()).WithContext("BuildVamana"));
  }
  if (!ids.ids.empty() && ids.ids.size() != view.size()) {
    return Status::InvalidArgument("BuildVamana: id mapping has " +
                                   std::to_string(ids.ids.size()) + " ids for " +
                                   std::to_string(view.size()) + " rows");
  }
  // The per-node arrays and scratch are the build's only large allocations;
  // report exhaustion as a Status rather than letting bad_alloc escape.
  try {
    VamanaBuilder builder(view, options, progress);
    return builder.Run(ids);
  } catch (const std::bad_alloc&) {
    return Status::Aborted("BuildVamana: out of memory for " + std::to_string(view.size()) +
                           " nodes at max_degree " + std::to_string(options.max_degree));
  }
}

Result<GreedySearchResult> GreedySearch(const VamanaGraph& graph, const VectorView& vectors,
                                        std::span<const float> query, std::uint32_t list_size,
                                        std::uint32_t k) {
  if (vectors.metric() != graph.metric()) {
    return Status::InvalidArgument("GreedySearch: the vectors' metric differs from the graph's");
  }
  return GreedySearch(vectors, graph.adjacency(), graph.entry_point(), query, list_size, k);
}

Result<GreedySearchResult> FilteredGreedySearch(const VamanaGraph& graph,
                                                const VectorView& vectors,
                                                const NodeLabels& labels,
                                                std::span<const float> query,
                                                std::span<const std::uint32_t> required,
                                                std::uint32_t list_size, std::uint32_t k) {
  if (graph.label_start_points().empty()) {
    return Status::InvalidArgument("FilteredGreedySearch: the graph was not built with labels");
  }
  if (required.empty() || !std::is_sorted(required.begin(), required.end()) ||
      std::adjacent_find(required.begin(), required.end()) != required.end()) {
    return Status::InvalidArgument(
        "FilteredGreedySearch: required labels must be non-empty, sorted and unique");
  }
  if (vectors.metric() != graph.metric() || vectors.size() != graph.size() ||
      labels.offsets.size() != static_cast<std::size_t>(graph.size()) + 1) {
    return Status::InvalidArgument(
        "FilteredGreedySearch: vectors and labels must be the graph's own");
  }
  if (query.size() != vectors.dim() || k == 0 || list_size == 0) {
    return Status::InvalidArgument("FilteredGreedySearch: bad query size, k or list_size");
  }
  std::vector<NodeId> entries;
  for (const std::uint32_t l : required) {
    if (l >= graph.label_start_points().size() || graph.label_start_points()[l] == kInvalidNode) {
      return GreedySearchResult{};  // a label nobody carries: nothing passes
    }
    entries.push_back(graph.label_start_points()[l]);
  }
  GraphSearcher searcher(vectors, graph.adjacency());
  const HasAllLabels accept(labels, required);
  const SearchCounters c = searcher.Search(query.data(), entries, std::max(list_size, k),
                                           nullptr, &accept);
  GreedySearchResult out;
  out.hops = c.hops;
  out.distance_computations = c.distance_computations;
  // An entry point of one required label may lack another: filter the list.
  for (std::size_t i = 0; i < searcher.Results().size() && out.ids.size() < k; ++i) {
    const Neighbor nb = searcher.Results()[i];
    if (!accept.Accept(nb.id)) continue;
    out.ids.push_back(nb.id);
    out.distances.push_back(nb.distance);
  }
  return out;
}

}  // namespace strata::graph
