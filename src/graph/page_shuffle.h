// PageShuffle: choose which graph nodes share an SSD page so that expanding a
// node during search brings its graph neighbours along in the same read.
//
// Algorithm (Starling, Wang et al., SIGMOD 2024, "Starling: An I/O-Efficient
// Disk-Resident Graph Index Framework", block shuffling; reference code
// SonglinLife/SSD_BASED_PLAN include/partitioner.h; notes in
// shared/research/algorithms.md §6; OctopusANN, "I/O Optimizations for
// Graph-Based Disk-Resident ANN Search: A Design Space Exploration", §3.1 /
// §4.2.1):
//   1. Breadth-first fill: stream nodes in id order; each unplaced node opens
//      (or joins) the current page, which is then filled with the unplaced
//      out-neighbours of its members, breadth-first, until it holds
//      records_per_page nodes. Every page but the last is full.
//   2. LDG refinement rounds (linear deterministic greedy streaming
//      partitioning): empty every page, stream the nodes in a random order
//      and put each into the non-full page p maximising
//        gain(p) = (#out- and in-neighbours currently in p) * (1 - |p| / C),
//      where a neighbour not yet re-placed this round counts in the page it
//      held in the previous round (that carry-over is what makes rounds refine
//      rather than restart). Ties go to the node's previous page, then to the
//      lower page id. A node with no neighbour in a non-full page takes the
//      first non-full page of a FIFO free queue.
//   3. The partition with the highest overlap ratio among the fill and all
//      rounds is kept (a round can lose quality, e.g. on rings and grids
//      where the fill is near optimal; this makes extra rounds never harmful).
//   4. Swap passes (our addition): for each node, exchange it with a member
//      of one of its best-connected other pages when that strictly raises the
//      number of same-page edges (Kernighan-Lin style hill climbing).
// The page count is always ceil(n / C): every page has exactly C slots and LDG
// never opens a page beyond that count, so no compaction is needed; only the
// P * C - n < C spare slots can leave pages short, and those pages are
// numbered last.
//
// Pure compute over neighbour lists: no I/O. Ids are the graph's NodeIds
// (uint32); the on-disk layout belongs to the format layer. A layout that
// numbers slots page-major uses slot(u) = page_of[u] * C + slot_of[u] and
// members[slot] as its slot -> node map (kEmptySlot: an empty record).
#ifndef STRATA_GRAPH_PAGE_SHUFFLE_H_
#define STRATA_GRAPH_PAGE_SHUFFLE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "graph/adjacency.h"
#include "graph/neighbor.h"
#include "strata/result.h"
#include "strata/status.h"

namespace strata::graph {

// Marks an unused slot of PagePartition::members.
inline constexpr std::uint32_t kEmptySlot = 0xFFFFFFFFu;

// Out-neighbour lists in compressed-sparse-row form: node i's neighbours are
// neighbors[offsets[i] .. offsets[i + 1]). A caller that reads lists from disk
// builds this with two arrays (8 bytes per node + 4 per edge) instead of a
// FlatAdjacency with fixed-width slots. A view: the arrays are not owned and
// must outlive every call that takes the view.
struct CsrGraphView {
  std::span<const std::uint64_t> offsets;  // size n + 1; offsets[0] == 0, non-decreasing
  std::span<const NodeId> neighbors;       // size offsets[n]; every id < n

  // Number of nodes (0 for an empty view).
  std::uint64_t size() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  // Node i's out-neighbours (i < size()).
  std::span<const NodeId> Neighbors(std::uint64_t i) const {
    return neighbors.subspan(offsets[i], offsets[i + 1] - offsets[i]);
  }
  // OK, or InvalidArgument if the offsets are malformed (empty, first not 0,
  // decreasing, last != neighbors.size()), n >= 2^32 - 1, or an id is >= n.
  // O(n + edges).
  Status Validate() const;
};

struct PageShuffleOptions {
  // C: node records one page holds (GraphLayout::records_per_sector; 5 for
  // 128-d float32 records with R = 64). >= 1. With 1 every page holds one node
  // and the result is the identity partition.
  std::uint32_t records_per_page = 0;
  // LDG refinement rounds after the breadth-first fill, in [0, 256]. Each
  // round costs about one pass over all edges in both directions (2-4 s for
  // 1M nodes at degree 39). On synth1m (C = 5, followed by 3 swap passes;
  // bench/results/page_shuffle_synth1m.md) OR(G) after 0 / 2 / 4 / 8 / 16
  // rounds is 0.641 / 0.672 / 0.678 / 0.681 / 0.682: rounds beyond 4 gain
  // under 0.001 OR per second, so 4 (Starling's own default; it suggests 8).
  int refine_rounds = 4;
  // Pairwise swap passes after the LDG rounds, in [0, 256] (a Kernighan-Lin
  // style hill climb over the best LDG partition; not in Starling; see
  // ShufflePages); stops early at a local optimum. Each pass costs 4-8 s on
  // synth1m. After 4 LDG rounds: OR 0.566 -> 0.655 / 0.674 / 0.678 / 0.680
  // with 1 / 2 / 3 / 4 passes, so 3.
  int swap_passes = 3;
  // Seed of the per-round random node orders. Same seed -> same partition.
  std::uint64_t seed = 1;
  // Worker threads for building the reverse graph, scoring nodes and measuring
  // OR(G); 0 = hardware concurrency. The result does not depend on it (see
  // ShufflePages).
  unsigned threads = 0;

  // OK, or InvalidArgument naming the bad field.
  Status Validate() const;
};

// An assignment of nodes to pages of `records_per_page` slots.
// Invariants (checked by ValidatePartition): num_pages() == ceil(n / C);
// members[page_of[u] * C + slot_of[u]] == u for every node u; every other
// slot is kEmptySlot; each page's used slots come first.
struct PagePartition {
  std::uint32_t records_per_page = 0;  // C
  std::vector<std::uint32_t> page_of;  // size n: node -> page
  std::vector<std::uint32_t> slot_of;  // size n: node -> position in its page (< C)
  std::vector<std::uint32_t> members;  // size num_pages() * C, page-major node ids

  // ceil(n / C) for a valid partition (members.size() / C); 0 if C == 0.
  std::uint64_t num_pages() const {
    return records_per_page == 0 ? 0 : members.size() / records_per_page;
  }
  // Number of nodes (page_of.size()).
  std::uint64_t num_nodes() const { return page_of.size(); }
  // Page p's node ids in slot order, kEmptySlot entries included (p < num_pages()).
  std::span<const std::uint32_t> Page(std::uint64_t p) const {
    return std::span<const std::uint32_t>(members).subspan(p * records_per_page, records_per_page);
  }
};

// Per-phase time and quality of one ShufflePages call, in the order run:
// "reverse" (building the in-neighbour lists), "fill" (breadth-first fill),
// then "ldg1", "ldg2", ... (one per refinement round), then "swap1", ...
struct PageShufflePhase {
  std::string name;
  double seconds = 0.0;        // wall time of the phase (excludes measuring OR)
  double overlap_ratio = 0.0;  // OR(G) after the phase (0 for "reverse")
};

struct PageShuffleReport {
  std::vector<PageShufflePhase> phases;
  double seconds_total = 0.0;           // whole call, OR measurements included
  double identity_overlap_ratio = 0.0;  // OR(G) of IdentityPartition (id order)
  double final_overlap_ratio = 0.0;     // OR(G) of the returned partition
  std::string best_phase;               // phase whose partition was returned
  std::uint64_t num_pages = 0;          // ceil(n / C)
  std::uint64_t short_pages = 0;        // pages with fewer than C nodes (numbered last)
  std::uint64_t free_queue_pops = 0;    // LDG placements without a neighbouring page, all rounds
  std::uint64_t swaps = 0;              // swaps and moves applied by the swap passes
  std::uint64_t edges = 0;              // out-edges of the graph (self-loops excluded)
  std::uint64_t work_bytes = 0;         // peak bytes of the algorithm's own arrays
};

// Called after each phase with the phase just finished (from the calling
// thread). May be null.
using PageShuffleProgressFn = std::function<void(const PageShufflePhase& phase)>;

// Partitions the nodes of `graph` into ceil(n / C) pages of C slots, placing
// graph neighbours (out- and in-edges) on the same page; see the file comment.
// Self-loops are ignored; duplicate ids in a list count twice.
//
// Determinism: the result depends only on the graph, records_per_page,
// refine_rounds, swap_passes and seed — not on `threads` (checked on synth1m:
// same partition with 1 and 2 threads). LDG rounds process nodes in blocks:
// the block's nodes are scored in parallel against the placement as it stood
// at the block start, then committed one by one in stream order (re-checking
// page sizes), so thread timing never changes a decision. The fill and the
// swap passes are sequential.
//
// Cost on synth1m (1M nodes, 38.8M edges, C = 5, default options): 32-34 s
// on a shared 2-core machine; +188 MiB peak RSS besides the caller's graph.
// Memory: the in-neighbour lists in CSR form (8 bytes per node + 4 per edge),
// 20 bytes per node of maps, stream order and best-so-far copy, C * 4 + 12
// bytes per page, and a 4-byte counter per page per thread. Thread-safe: no
// shared state; the graph is only read. `report` (may be null) receives
// timings and OR(G) per phase; `progress` (may be null) each phase as it ends.
//
// Errors: InvalidArgument for bad options, a malformed CSR view, a neighbour
// id >= n, or n >= 2^32 - 1; Aborted if memory cannot be allocated.
Result<PagePartition> ShufflePages(const CsrGraphView& graph, const PageShuffleOptions& options,
                                   PageShuffleReport* report = nullptr,
                                   const PageShuffleProgressFn& progress = nullptr);
// The same over a FlatAdjacency (e.g. a graph just built in memory).
Result<PagePartition> ShufflePages(const FlatAdjacency& graph, const PageShuffleOptions& options,
                                   PageShuffleReport* report = nullptr,
                                   const PageShuffleProgressFn& progress = nullptr);

// DiskANN's packed layout: node u in page u / C at slot u % C. InvalidArgument
// if records_per_page == 0 or n >= 2^32 - 1.
Result<PagePartition> IdentityPartition(std::uint64_t n, std::uint32_t records_per_page);

// OctopusANN's overlap ratio:
//   OR(G) = (1/n) * sum_u |N_out(u) ∩ B(u) \ {u}| / (C - 1),
// B(u) = the nodes on u's page, C = records_per_page (the page capacity, so a
// short last page is not favoured). Neighbour lists are taken as sets only if
// they hold no duplicates (a duplicate counts twice, as in ShufflePages). 0 for
// n == 0 or C == 1. Computed exactly in integers, so the value does not depend
// on `threads` (0 = hardware concurrency). InvalidArgument if the partition
// does not cover graph.size() nodes, or an id is >= n. O(n + edges).
Result<double> OverlapRatio(const CsrGraphView& graph, const PagePartition& partition,
                            unsigned threads = 0);
Result<double> OverlapRatio(const FlatAdjacency& graph, const PagePartition& partition,
                            unsigned threads = 0);

// OK if `partition` is a valid partition of n nodes: C >= 1, num_pages() ==
// ceil(n / C), every node on exactly one page, page_of / slot_of / members
// consistent, each page's used slots first, every other slot kEmptySlot.
// Otherwise InvalidArgument describing the first defect. O(n + pages * C).
Status ValidatePartition(const PagePartition& partition, std::uint64_t n);

}  // namespace strata::graph

#endif  // STRATA_GRAPH_PAGE_SHUFFLE_H_
