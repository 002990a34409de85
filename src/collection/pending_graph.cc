#include "collection/pending_graph.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <new>
#include <span>
#include <string>

#include "graph/robust_prune.h"
#include "graph/spin_lock.h"
#include "graph/vector_view.h"
#include "graph/visited_set.h"

namespace strata::collection {

using graph::Neighbor;
using graph::NeighborLess;
using graph::SpinLock;

// kChunkNodes nodes: a lock, a degree and `capacity` id slots each. Lists and
// counts are plain words guarded by the node's lock; the indexer, their only
// writer, also reads them without it.
struct PendingGraph::Chunk {
  SpinLock locks[kChunkNodes];
  std::uint32_t count[kChunkNodes] = {};
  std::unique_ptr<std::uint32_t[]> ids;  // kChunkNodes * capacity

  std::uint32_t* List(std::uint32_t i, std::uint32_t capacity) {
    return ids.get() + static_cast<std::size_t>(i) * capacity;
  }
};

// Per-thread buffers of a walk, and the indexer's prune buffers.
struct PendingGraph::Scratch {
  graph::CandidateList candidates;
  graph::VisitedSet visited;
  std::vector<Neighbor> expanded;
  std::vector<std::uint32_t> nbrs;
  std::vector<std::uint32_t> fresh;
  // Prune (indexer only).
  std::vector<Neighbor> pool;
  std::vector<Neighbor> rev_pool;
  std::vector<std::uint32_t> pruned;
  std::vector<std::uint32_t> rev_pruned;
  std::vector<Neighbor> local_pool;
  std::vector<graph::NodeId> local_out;
  std::vector<float> rows;
  graph::PruneScratch prune;
};

namespace {

void PrefetchRow(const float* row, std::size_t bytes) {
  const char* p = reinterpret_cast<const char*>(row);
  for (std::size_t off = 0; off < bytes; off += 64) __builtin_prefetch(p + off);
}

}  // namespace

Status PendingGraph::Options::Validate() const {
  if (R == 0) return Status::InvalidArgument("pending graph: R must be > 0");
  if (L == 0) return Status::InvalidArgument("pending graph: L must be > 0");
  if (!(alpha >= 1.0f) || !std::isfinite(alpha)) {
    return Status::InvalidArgument("pending graph: alpha must be a finite value >= 1");
  }
  if (!(slack >= 1.0f) || !(slack <= 4.0f)) {
    return Status::InvalidArgument("pending graph: slack must be in [1, 4]");
  }
  return Status::OK();
}

PendingGraph::PendingGraph(const PendingSet* set, Metric metric, const Options& o,
                           kernels::ErasedDistanceFn distance)
    : set_(set),
      metric_(metric),
      o_(o),
      dim_(set->dim()),
      capacity_(std::max<std::uint32_t>(
          o.R, static_cast<std::uint32_t>(std::floor(static_cast<double>(o.slack) * o.R)))),
      distance_(distance),
      chunks_(new Chunk*[kMaxChunks]()),
      indexer_scratch_(std::make_unique<Scratch>()) {}

PendingGraph::~PendingGraph() {
  const std::uint32_t n = chunks_allocated_.load(std::memory_order_relaxed);
  for (std::uint32_t c = 0; c < n; ++c) delete chunks_[c];
}

Result<std::unique_ptr<PendingGraph>> PendingGraph::Create(const PendingSet* set, Metric metric,
                                                           const Options& o) {
  if (set == nullptr) return Status::InvalidArgument("pending graph: null pending set");
  STRATA_RETURN_IF_ERROR(o.Validate());
  kernels::ErasedDistanceFn fn = kernels::GetDistanceFn(metric, ElementType::kFloat32);
  if (fn == nullptr) return Status::InvalidArgument("pending graph: no distance for this metric");
  return std::unique_ptr<PendingGraph>(new PendingGraph(set, metric, o, fn));
}

Status PendingGraph::CatchUp(std::uint32_t upto) {
  // The acquire load of size() makes the set's writes of entries below it
  // visible here; the release store of indexed_ passes them on to searches.
  const std::uint32_t n = set_->size();
  if (upto > n) {
    return Status::InvalidArgument("pending graph: catch-up to " + std::to_string(upto) +
                                   " past the set's " + std::to_string(n) + " entries");
  }
  for (std::uint32_t p = indexed_.load(std::memory_order_relaxed); p < upto; ++p) {
    STRATA_RETURN_IF_ERROR(InsertNode(p));
    indexed_.store(p + 1, std::memory_order_release);
  }
  return Status::OK();
}

Status PendingGraph::InsertNode(std::uint32_t p) {
  const std::uint32_t c = p / kChunkNodes;
  if (c == chunks_allocated_.load(std::memory_order_relaxed)) {
    auto* chunk = new (std::nothrow) Chunk;
    if (chunk != nullptr) {
      chunk->ids.reset(new (std::nothrow)
                           std::uint32_t[static_cast<std::size_t>(kChunkNodes) * capacity_]);
    }
    if (chunk == nullptr || chunk->ids == nullptr) {
      delete chunk;
      return Status::InvalidArgument("pending graph: out of memory");
    }
    chunks_[c] = chunk;
    chunks_allocated_.store(c + 1, std::memory_order_relaxed);
  }

  Scratch& s = *indexer_scratch_;
  s.pruned.clear();
  if (p > 0) {
    // The indexer is the only writer, so it reads lists without locks.
    Walk(set_->vector(p), /*bound=*/p, o_.L, /*locked=*/false, /*expanded=*/true, &s);
    s.pool.assign(s.expanded.begin(), s.expanded.end());
    Prune(p, &s.pool, &s, &s.pruned);
  }
  Chunk* chunk = chunks_[c];
  const std::uint32_t i = p % kChunkNodes;
  {
    // No search reaches p yet (it is above indexed_ and in no list), but the
    // lock keeps every list write under it.
    std::lock_guard<SpinLock> guard(chunk->locks[i]);
    std::copy(s.pruned.begin(), s.pruned.end(), chunk->List(i, capacity_));
    chunk->count[i] = static_cast<std::uint32_t>(s.pruned.size());
  }
  for (const std::uint32_t j : s.pruned) AddReverseEdge(j, p, &s);
  return Status::OK();
}

void PendingGraph::AddReverseEdge(std::uint32_t j, std::uint32_t p, Scratch* s) {
  Chunk* chunk = chunks_[j / kChunkNodes];
  const std::uint32_t i = j % kChunkNodes;
  std::uint32_t* list = chunk->List(i, capacity_);
  const std::uint32_t n = chunk->count[i];  // only this thread writes it
  if (std::find(list, list + n, p) != list + n) return;
  if (n < capacity_) {
    // Slack left: append without a prune (the Vamana builder's rule).
    std::lock_guard<SpinLock> guard(chunk->locks[i]);
    list[n] = p;
    chunk->count[i] = n + 1;
    return;
  }
  // Full: re-prune N(j) ∪ {p} down to R, unlocked (no other writer can change
  // N(j) meanwhile), then swap the new list in under the lock.
  const float* vj = set_->vector(j);
  s->rev_pool.clear();
  s->rev_pool.push_back({p, Distance(vj, set_->vector(p))});
  for (std::uint32_t x = 0; x < n; ++x) {
    s->rev_pool.push_back({list[x], Distance(vj, set_->vector(list[x]))});
  }
  Prune(j, &s->rev_pool, s, &s->rev_pruned);
  std::lock_guard<SpinLock> guard(chunk->locks[i]);
  std::copy(s->rev_pruned.begin(), s->rev_pruned.end(), list);
  chunk->count[i] = static_cast<std::uint32_t>(s->rev_pruned.size());
}

void PendingGraph::Prune(std::uint32_t node, std::vector<Neighbor>* pool, Scratch* s,
                         std::vector<std::uint32_t>* out) const {
  out->clear();
  graph::PruneParams params;
  params.max_degree = o_.R;
  params.alpha = o_.alpha;
  // Deduplicate, drop the node, order and cut to C here, so only the rows
  // RobustPrune will read are copied; it repeats these steps on the local
  // pool (cheaply) and keeps the same order, since local ids follow it.
  std::vector<Neighbor>& p = *pool;
  graph::PreparePrunePool(node, params.max_occlusion_size, pool);
  if (p.empty()) return;

  const std::size_t m = p.size();
  s->rows.resize(m * dim_);
  s->local_pool.resize(m);
  for (std::size_t r = 0; r < m; ++r) {
    float* dst = s->rows.data() + r * dim_;
    const float* src = set_->vector(p[r].id);
    std::copy_n(src, dim_, dst);
    if (metric_ == Metric::kCosine) {
      // The view ranks cosine as 1 - <x,y> on unit rows; the set's vectors are raw.
      double norm = 0.0;
      for (std::uint32_t d = 0; d < dim_; ++d) norm += static_cast<double>(dst[d]) * dst[d];
      if (norm > 0.0) {
        const auto inv = static_cast<float>(1.0 / std::sqrt(norm));
        for (std::uint32_t d = 0; d < dim_; ++d) dst[d] *= inv;
      }
    }
    s->local_pool[r] = {static_cast<graph::NodeId>(r), p[r].distance};
  }
  auto view =
      graph::VectorView::Create(std::span<const float>(s->rows.data(), m * dim_), dim_, metric_);
  if (!view.ok()) {
    // Unreachable for a metric Create accepted; keep the nearest R rather
    // than leave the node unlinked.
    for (std::size_t r = 0; r < m && r < o_.R; ++r) out->push_back(p[r].id);
    return;
  }
  // The pruned node is not among the local rows: any id >= m stands for it.
  graph::RobustPrune(graph::kInvalidNode, &s->local_pool, params, *view, &s->prune, &s->local_out);
  out->reserve(s->local_out.size());
  for (const graph::NodeId r : s->local_out) out->push_back(p[r].id);
}

void PendingGraph::Walk(const float* query, std::uint32_t bound, std::uint32_t list_size,
                        bool locked, bool expanded, Scratch* s) const {
  s->candidates.Reset(std::max<std::uint32_t>(list_size, 1));
  s->visited.Clear();
  s->expanded.clear();
  if (bound == 0) return;
  const std::size_t prefetch_bytes = std::min<std::size_t>(std::size_t{dim_} * sizeof(float), 256);
  s->visited.Insert(0);
  s->candidates.Insert(0, Distance(query, set_->vector(0)));
  while (s->candidates.HasUnexpanded()) {
    const Neighbor cur = s->candidates.ExpandNext();
    if (expanded) s->expanded.push_back(cur);
    Chunk* chunk = chunks_[cur.id / kChunkNodes];
    const std::uint32_t i = cur.id % kChunkNodes;
    const std::uint32_t* list = chunk->List(i, capacity_);
    if (locked) {
      std::lock_guard<SpinLock> guard(chunk->locks[i]);
      s->nbrs.assign(list, list + chunk->count[i]);
    } else {
      s->nbrs.assign(list, list + chunk->count[i]);
    }
    // Ids at or above `bound` are entries published after this walk started
    // (reverse edges to nodes still being inserted, or later ones): the
    // caller scans them exactly, so the walk must not return them, and they
    // are not ordered before this thread's acquire of indexed_.
    s->fresh.clear();
    for (const std::uint32_t x : s->nbrs) {
      if (x < bound && s->visited.Insert(x)) s->fresh.push_back(x);
    }
    const std::size_t nf = s->fresh.size();
    for (std::size_t f = 0; f < nf && f < 2; ++f) {
      PrefetchRow(set_->vector(s->fresh[f]), prefetch_bytes);
    }
    for (std::size_t f = 0; f < nf; ++f) {
      if (f + 2 < nf) PrefetchRow(set_->vector(s->fresh[f + 2]), prefetch_bytes);
      const std::uint32_t x = s->fresh[f];
      s->candidates.Insert(x, Distance(query, set_->vector(x)));
    }
  }
}

std::uint32_t PendingGraph::Search(const float* query, std::uint64_t snapshot, std::size_t k,
                                   std::uint32_t L,
                                   std::vector<std::pair<float, VectorId>>* out,
                                   const IdPredicate* accept) const {
  out->clear();
  std::uint32_t bound = indexed();
  if (k == 0 || bound == 0) return bound;
  // The write path appends in write order, so the entries inserted by
  // `snapshot` are a prefix; an older snapshot walks only that prefix instead
  // of filtering out nearly everything the walk finds (its recall would
  // collapse). The result stays exact-complementary whatever the order: the
  // caller scans from the returned bound.
  if (set_->insert_seq(bound - 1) > snapshot) {
    std::uint32_t lo = 0, hi = bound - 1;  // first position not yet inserted at snapshot
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;
      if (set_->insert_seq(mid) <= snapshot) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    // A short prefix is left to the caller's exact scan, which skips the
    // invisible entries before computing distances: it costs about as much as
    // a walk there and, unlike one, cannot miss an entry whose edges were
    // pruned in favour of later ones (the prefix's induced graph).
    bound = lo < kMinWalkPrefix ? 0 : lo;
    if (bound == 0) return 0;
  }
  const std::size_t list = std::max<std::size_t>(L == 0 ? o_.L : L, k);
  Scratch* s = ThreadScratch();
  Walk(query, bound, static_cast<std::uint32_t>(std::min<std::size_t>(list, 1u << 20)),
       /*locked=*/true, /*expanded=*/false, s);
  const graph::CandidateList& c = s->candidates;
  for (std::size_t r = 0; r < c.size() && out->size() < k; ++r) {
    const std::uint32_t pos = c[r].id;
    if (set_->insert_seq(pos) > snapshot) continue;
    if (set_->dead_seq(pos) <= snapshot) continue;
    if (accept != nullptr && !(*accept)(set_->id(pos))) continue;
    out->emplace_back(c[r].distance, set_->id(pos));
  }
  return bound;
}

std::vector<std::uint32_t> PendingGraph::Neighbors(std::uint32_t pos) const {
  std::vector<std::uint32_t> out;
  if (pos >= indexed()) return out;
  Chunk* chunk = chunks_[pos / kChunkNodes];
  const std::uint32_t i = pos % kChunkNodes;
  std::lock_guard<SpinLock> guard(chunk->locks[i]);
  const std::uint32_t* list = chunk->List(i, capacity_);
  out.assign(list, list + chunk->count[i]);
  return out;
}

std::size_t PendingGraph::memory_bytes() const {
  const std::size_t chunks = chunks_allocated_.load(std::memory_order_relaxed);
  return chunks * (sizeof(Chunk) + sizeof(std::uint32_t) * kChunkNodes * capacity_) +
         sizeof(Chunk*) * kMaxChunks;
}

// One walk buffer per searching thread, reused across queries (and graphs):
// a fresh VisitedSet and candidate list per query would cost allocations and
// a 16 KiB clear, a visible share of a short search.
PendingGraph::Scratch* PendingGraph::ThreadScratch() {
  thread_local Scratch scratch;
  return &scratch;
}

}  // namespace strata::collection
