// PendingGraph: an in-RAM Vamana graph over a PendingSet's entries, so the
// pending delta is searched by a graph walk instead of an exact scan.
//
// FreshDiskANN's TempIndex (Singh et al., "FreshDiskANN: A Fast and Accurate
// Graph-Based ANN Index for Streaming Similarity Search", arXiv 2105.09613,
// section 4): recent inserts go into a small in-memory graph that is searched
// beside the SSD index and folded into it by the next merge. Insertion is the
// Vamana builder's (graph/vamana_builder.cc): greedy search for the new point
// from the entry (entry 0, the first inserted), RobustPrune of the expanded
// nodes to R out-edges, then a reverse edge j -> p for every new neighbour j,
// appended while N(j) has slack (floor(slack * R) slots) and re-pruned to R
// only when it is full.
//
// Entries [0, indexed()) are in the graph; callers scan [indexed(), size())
// of the set exactly. Entries are never removed: one killed by a replace or a
// delete (dead_seq) still routes the walk but is never returned, and the whole
// graph is dropped with its set when a merge starts a new one.
//
// Storage: adjacency lives in fixed-capacity chunks of kChunkNodes nodes
// (floor(slack * R) id slots, a count and a SpinLock per node) reached through
// a fixed table of chunk pointers, as in PendingSet: chunks never move, so
// readers walk the graph while the indexer grows it. A list is only read or
// written under its node's lock, and the lock is held only to copy or modify
// the list, never across distance computations.
//
// Thread-safety: one indexer thread at a time calls CatchUp (it is the only
// writer of the adjacency); any number of threads call Search, indexed() and
// memory_bytes() concurrently with it and with the set's writer. The set must
// outlive the graph; entries are published to searches by the release store
// of indexed() (which follows the set's own publication of its entries).
#ifndef STRATA_COLLECTION_PENDING_GRAPH_H_
#define STRATA_COLLECTION_PENDING_GRAPH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "collection/pending_set.h"
#include "graph/neighbor.h"
#include "kernels/distance.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::collection {

class PendingGraph {
 public:
  struct Options {
    std::uint32_t R = 32;  // out-degree bound after a prune, >= 1
    std::uint32_t L = 64;  // insertion search list size, >= 1
    float alpha = 1.2f;    // RobustPrune occlusion factor, >= 1
    float slack = 1.3f;    // list capacity = floor(slack * R) (>= R) before a re-prune; >= 1
    // InvalidArgument on a value out of range.
    Status Validate() const;
  };

  // A graph over `set` (not owned; must outlive the graph), with distances by
  // `metric` on its raw float32 vectors: squared L2, -<x,y>, or 1 - cos(x,y)
  // (the same as PendingSet::Scan). Starts empty (indexed() == 0).
  // InvalidArgument for a null set, bad options or an unknown metric.
  static Result<std::unique_ptr<PendingGraph>> Create(const PendingSet* set, Metric metric,
                                                      const Options& o);
  ~PendingGraph();
  PendingGraph(const PendingGraph&) = delete;
  PendingGraph& operator=(const PendingGraph&) = delete;

  // Inserts set entries [indexed(), upto) in position order, publishing each
  // (indexed() advances one entry at a time, so searches see progress while
  // a long catch-up runs). One caller at a time (the indexer). A no-op when
  // upto <= indexed(). InvalidArgument if upto > set->size(); InvalidArgument
  // ("out of memory") if an adjacency chunk cannot be allocated, with the
  // entries before it inserted.
  Status CatchUp(std::uint32_t upto);

  // Entries [0, indexed()) are in the graph (acquire load).
  std::uint32_t indexed() const { return indexed_.load(std::memory_order_acquire); }

  // The up to k nearest entries live at `snapshot` (insert_seq <= snapshot <
  // dead_seq) among the graphed ones, by greedy search from entry 0 with a
  // list of max(L, k) (L = 0 means Options::L); dead or not-yet-visible
  // entries still route the walk but are never returned. Writes (distance,
  // id) ascending by distance to *out (cleared first); fewer than k when the
  // final list holds fewer live entries. `query` is dim() floats.
  // Returns n, the number of entries searched: every result is at a position
  // < n, and the caller must scan exactly [n, set->size()) beside it. n is
  // indexed() loaded once at the start (so it may exceed an indexed() read
  // earlier), cut to the prefix of entries inserted by `snapshot` when the
  // newest graphed one is not (the set is appended in write order; an old
  // snapshot then walks the graph of that prefix instead of filtering), and
  // 0 (nothing searched, all left to the exact scan) when that prefix is
  // shorter than kMinWalkPrefix.
  // Thread-safe against CatchUp and other searches.
  // With `accept`, only entries whose id it accepts are returned (the others
  // still route the walk).
  std::uint32_t Search(const float* query, std::uint64_t snapshot, std::size_t k, std::uint32_t L,
                       std::vector<std::pair<float, VectorId>>* out,
                       const IdPredicate* accept = nullptr) const;

  // Bytes held by the adjacency: allocated chunks plus the chunk table (the
  // vectors belong to the set).
  std::size_t memory_bytes() const;

  // The out-neighbours of graphed entry `pos` (< indexed()), copied under its
  // lock. For tests and statistics.
  std::vector<std::uint32_t> Neighbors(std::uint32_t pos) const;

  std::uint32_t capacity_per_node() const { return capacity_; }

  static constexpr std::uint32_t kChunkNodes = 1024;
  // Shortest snapshot prefix walked; see Search.
  static constexpr std::uint32_t kMinWalkPrefix = 2048;
  static constexpr std::uint32_t kMaxChunks = PendingSet::kMaxChunks;

 private:
  struct Chunk;
  struct Scratch;
  PendingGraph(const PendingSet* set, Metric metric, const Options& o,
               kernels::ErasedDistanceFn distance);

  static Scratch* ThreadScratch();
  float Distance(const float* a, const float* b) const { return distance_(a, b, dim_); }
  // Greedy search over entries [0, bound) from entry 0; leaves the final list
  // in s->candidates and, if `expanded`, the expanded nodes in s->expanded.
  // `locked`: copy lists under their locks (readers); the indexer, the only
  // writer, reads its own lists without.
  void Walk(const float* query, std::uint32_t bound, std::uint32_t list_size, bool locked,
            bool expanded, Scratch* s) const;
  Status InsertNode(std::uint32_t p);
  void AddReverseEdge(std::uint32_t j, std::uint32_t p, Scratch* s);
  // RobustPrune of `pool` (positions with their distance to the pruned node,
  // any order, duplicates allowed; consumed) into *out, ascending by distance.
  // RobustPrune reads a VectorView, so the candidates' rows are first copied
  // into one contiguous buffer (unit-normalised for cosine).
  void Prune(std::uint32_t node, std::vector<graph::Neighbor>* pool, Scratch* s,
             std::vector<std::uint32_t>* out) const;

  const PendingSet* set_;
  Metric metric_;
  Options o_;
  std::uint32_t dim_;
  std::uint32_t capacity_;  // floor(slack * R) id slots per node
  kernels::ErasedDistanceFn distance_;
  // Fixed table of chunk pointers, never reallocated. Chunk c is written by
  // the indexer before any node in it is published (by indexed_ or by an edge
  // written under a lock), so readers index it without a lock.
  std::unique_ptr<Chunk*[]> chunks_;
  std::atomic<std::uint32_t> chunks_allocated_{0};  // written by the indexer only
  std::atomic<std::uint32_t> indexed_{0};
  std::unique_ptr<Scratch> indexer_scratch_;  // indexer only
};

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_PENDING_GRAPH_H_
