// A graph index whose decoupled layout (WriteDecoupledLayout) takes inserts
// and deletes in place while it is searched (NAVIS; Sun et al., "NAVIS:
// Concurrent Search and Update with Low Position-Seeking Overhead in On-SSD
// Graph-Based Vector Search"): no pending list and no merge. An insert seeks
// its position over edge pages, writes its vector and every edge list it
// changes out of place in one batch of asynchronous writes, then switches
// the RAM indirection table; a delete tombstones the row at once. Searchers
// from index() may run on any number of threads beside one writer.
//
// An insert is two steps, so that an owner can make it durable in between:
// Prepare writes the vector and the changed lists to fresh places in the
// files (nothing refers to them yet), Commit switches the RAM indirection
// table. The moves Commit made are the owner's journal: a reopen given them
// (InPlaceRecovery) finds every committed insert; without them it finds the
// layout as written (the collection's in_place mode keeps the journal in
// its RocksDB store). OpenOptions::cache_mib sizes the hot edge-page cache
// (NAVIS-cache): a page's cached copy is dropped when the page is reused.
#ifndef STRATA_IN_PLACE_GRAPH_H_
#define STRATA_IN_PLACE_GRAPH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "strata/graph_index.h"
#include "strata/index.h"

namespace strata {

struct InPlaceGraphOptions {
  std::uint32_t capacity = 0;  // most vectors, the index's and the inserted (RAM reserved up front)
  std::uint32_t R = 0;         // out-degree of new lists; 0 = the layout's (capacity / 1.3)
  std::uint32_t L = 64;        // position seeking's list size
  // Reads per round while seeking: 8 rather than the search default of 4
  // (synth1m 500k, 2 threads: 1,308 inserts/s against 1,214, as many pages).
  std::uint32_t beam_width = 8;
  // Candidates given exact distances while seeking: 8, not 16 (synth1m 500k
  // + 20k, 2 insert threads beside a search: 1,493 inserts/s against
  // 1,074–1,162, searches 0.64x against 0.50–0.56x, recall equal).
  std::uint32_t exact_neighbours = 8;
  float alpha = 1.2f;
  // Back-edges an insert adds, to its nearest out-neighbours (0: to every
  // one, as Vamana and NAVIS do); each is an edge list rewritten.
  std::uint32_t back_edges = 0;
  // The entrance graph (the index's in-RAM MemGraph, where searches start)
  // follows the inserts: one new vertex in the share the index was built
  // with joins it, 64 at a time, in a graph built aside and swapped in
  // (NAVIS's live entrance graph). False: it stays as built.
  bool entrance_updates = true;
  // Inserts take along the few lists left on the pages their changed lists
  // leave (SweepLeftovers), so those pages empty at once. False: only the
  // changed lists move (compaction by PrepareCompaction is the owner's call).
  bool sweep_leftovers = true;
  // Hot pages are rewritten whole: a changed list on an edge page the
  // hot-page cache holds at least this hot (its LFU count; 1 under the
  // other policies) stays with its page mates, the page written out of
  // place with the change in. 0: every changed list moves to the insert's
  // fresh pages. Only with a cache (OpenOptions::cache_mib).
  std::uint32_t hot_page_heat = 0;
  // Searches leave deleted rows out of their results. An owner that
  // decides what is live through the search's IdFilter turns this off.
  bool search_hides_deleted = true;
};

// Where one vertex's edge list is after an insert: a journal entry.
struct InPlaceListMove {
  std::uint32_t vertex = 0;
  std::uint32_t page = 0;
  std::uint16_t slot = 0;
};

// A journal to replay at Open: the state the last committed insert left.
struct InPlaceRecovery {
  // The current place of every list moved since the layout was written
  // (one per vertex; a later entry of a vertex wins).
  std::vector<InPlaceListMove> moves;
  // Vertices committed past the layout's own, and their PQ codes
  // (PreparedInPlaceInsert::code, in vertex order).
  std::uint32_t appended = 0;
  std::vector<std::uint8_t> codes;
  // The vector of appended vertex `v`, to rebuild the vector file's last
  // sector if a crash tore its rewrite (false: no longer needed, a deleted
  // vertex). Null: such a sector is Corruption.
  std::function<bool(std::uint32_t v, std::span<float> out)> vector_of;
};

// What one insert did: reads, the write volume and where the time went.
struct InsertReport {
  std::uint32_t pages_read = 0;
  std::uint32_t lists_written = 0;
  std::uint32_t lists_pruned = 0;
  std::uint32_t edge_pages_written = 0;
  std::uint32_t pages_reused = 0;
  std::uint64_t bytes_written = 0;
  double seek_us = 0, prune_us = 0, write_us = 0, publish_us = 0;
  std::uint32_t hot_pages_rewritten = 0;  // of edge_pages_written (hot_page_heat)
  std::uint32_t lists_swept = 0;  // of lists_written, unchanged lists moved along (sweep_leftovers)
  // Of the changed lists on hot pages, those that had grown past their
  // page's room and moved to the insert's fresh pages instead.
  std::uint32_t lists_spilled = 0;
};

// An insert written to the files, not yet visible (InPlaceGraph::Prepare).
struct PreparedInPlaceInsert {
  std::uint32_t vertex = 0;
  std::uint64_t row = 0;               // its row once committed
  std::vector<InPlaceListMove> moves;  // the new vertex's list first
  std::vector<std::uint8_t> code;      // the new vertex's PQ code
  InsertReport report;
  // Structural updates are one at a time: held from Prepare to Commit.
  std::unique_lock<std::mutex> writer_lock;
};

class InPlaceGraph {
 public:
  // Opens the graph index in `index_dir` with its decoupled layout in
  // `decoupled_dir` (`open` as for GraphIndex::Open, its decoupled_dir
  // replaced; cache_mib must be 0). NotSupported for element types other
  // than float32.
  // With `recovery`, the layout's files may have grown since they were
  // written and the journal is replayed over them (Corruption if it does
  // not fit them).
  static Result<std::unique_ptr<InPlaceGraph>> Open(const std::string& index_dir,
                                                    const std::string& decoupled_dir,
                                                    const InPlaceGraphOptions& options,
                                                    OpenOptions open = {},
                                                    const InPlaceRecovery* recovery = nullptr);
  ~InPlaceGraph();

  // Inserts a vector; returns its row (the index's rows, then one per
  // insert). Thread-safe: position seeking runs on every calling thread
  // at once, the structural updates one at a time (NAVIS's concurrent
  // inserts; inserts made at once do not link to each other).
  Result<std::uint32_t> Insert(std::span<const float> vector, InsertReport* report = nullptr);
  // Insert's two steps: Prepare seeks (in parallel with other calls), then
  // takes the writer lock and writes out of place; Commit publishes and
  // releases the lock. Every Prepare that succeeded must be committed, on
  // the same thread, before that thread prepares another.
  Status Prepare(std::span<const float> vector, PreparedInPlaceInsert* out);
  void Commit(PreparedInPlaceInsert* prepared);
  // A deleted row's repair (Xu et al., "In-Place Updates of a Graph Index
  // for Streaming Approximate Nearest Neighbor Search", IP-DiskANN): the
  // vertices near it whose lists point to it drop that edge and take up to
  // 3 of its out-neighbours instead, so the graph stays navigable as rows
  // are deleted. Two steps as Prepare/Commit (out->vertex is kNoVertex;
  // out->moves may be empty: nothing to write). NotFound for a row that is
  // not deleted.
  static constexpr std::uint32_t kNoVertex = 0xFFFFFFFFu;
  Status PrepareRepair(std::uint64_t row, PreparedInPlaceInsert* out);
  // Compaction of sparse edge pages, when the pages lists are on exceed the
  // fewest that could hold them by `slack` (a quarter by default): the
  // lists of a neighbourhood of sparse pages (at most `sparse_fill` of a
  // full page's lists left on them) rewritten onto full pages,
  // neighbours together, so the pages they leave are reused and a walk
  // fetches full pages. Two steps as Prepare/Commit (out->vertex is
  // kNoVertex); empty out->moves when none is due.
  Status PrepareCompaction(PreparedInPlaceInsert* out, double slack = 0.25,
                           double sparse_fill = 1.0 / 3.0);
  // fdatasync of the layout's files (before a journal write that must
  // survive power loss).
  Status Sync();
  // Tombstones a row (thread-safe; never waits for an insert). NotFound
  // for a missing or deleted row.
  Status Delete(std::uint32_t row);

  // The searchable index (NewSearcher and searches are thread-safe beside
  // the writer); searchers must not outlive this object.
  const Index& index() const;
  std::uint64_t num_rows() const;     // rows ever held (deleted ones too)
  std::uint32_t num_vertices() const;  // vertices ever held
  std::uint32_t base_vertices() const; // the layout's own (appended ones follow)
  std::uint64_t base_rows() const;     // the index's rows (appended rows follow)
  std::uint32_t capacity() const;      // most vertices (InPlaceGraphOptions::capacity)
  std::size_t code_size() const;
  // The writer's counters: they wait for the writer lock, so not on a
  // thread that holds a prepared insert.
  std::uint64_t edge_pages() const;   // edge pages in the file
  std::uint64_t free_edge_pages() const;  // pages whose lists have all moved, to be reused
  std::uint64_t live_edge_pages() const;  // pages some current list is on (writer's view)

 private:
  struct State;
  explicit InPlaceGraph(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace strata

#endif  // STRATA_IN_PLACE_GRAPH_H_
