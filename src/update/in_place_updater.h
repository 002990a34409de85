// In-place inserts and deletes on the decoupled graph layout while searches
// run (Sun et al., "NAVIS: Concurrent Search and Update with Low
// Position-Seeking Overhead in On-SSD Graph-Based Vector Search"):
//
//   1. position seeking reads edge pages only: the decoupled walk at L,
//      steered by the PQ codes in RAM; the nearest `exact_neighbours`
//      candidates get exact distances from the vector file, the rest keep
//      their code distances (shortcuts need diversity, not exactness);
//   2. RobustPrune (Subramanya et al., DiskANN) chooses the new vertex's R
//      out-neighbours, distances between candidates taken from their decoded
//      PQ codes;
//   3. back-edges: each chosen neighbour (the nearest
//      InPlaceOptions::back_edges of them, when set) gets the new vertex
//      appended; a list past the list capacity (1.3 R) is pruned back to R
//      on code distances;
//   4. the structural update is out of place: the new vector goes to its
//      slot of the vector file, and every changed edge list (the new
//      vertex's and its neighbours') is gathered onto fresh edge pages —
//      pages whose every list has moved away are reused first, once no
//      search that could still read them runs (decoupled_growth.h) — all
//      written in one batch of asynchronous writes; only then does the
//      indirection table switch each vertex, one 8-byte store each, and
//      the vertex count publish the new vertex. A search sees a list's old
//      version or its new one, never a torn one, and never waits.
//   5. deletes mark a tombstone at once (the vertex is still walked
//      through, never returned, and never chosen as a new neighbour).
//
// One writer: Prepare, Publish and Delete are not thread-safe with each
// other; any number of searches may run beside them. An insert is two
// steps, so that its owner can make it durable in between: Prepare writes
// everything to the files (nothing refers to it yet: a crash leaves pages
// no table names), Publish switches the table. What Publish switched —
// each moved list's new place and the new vertex's code — is the journal
// entry the owner records (the collection, in RocksDB, in the same batch as
// the rest of the write); Create replays such a journal over the layout's
// own table (InPlaceRecovery). A page is reused only after the insert that
// emptied it was published and, when the owner says so (Sync before its
// journal write), durable.
#ifndef STRATA_UPDATE_IN_PLACE_UPDATER_H_
#define STRATA_UPDATE_IN_PLACE_UPDATER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "graph/neighbor.h"
#include "graph/robust_prune.h"
#include "search/decoupled_search.h"
#include "search/graph_index_data.h"
#include "strata/io.h"
#include "strata/result.h"

namespace strata::update {

struct InPlaceOptions {
  std::uint32_t R = 0;  // out-degree; 0 = the edge file's list capacity / 1.3
  std::uint32_t L = 64;  // position seeking's list size (L_build)
  // Reads per round while seeking: 8 rather than the search default of 4
  // (synth1m 500k, 2 threads: 1,308 inserts/s against 1,214, as many pages).
  std::uint32_t beam_width = 8;
  // Candidates of the position seeking given exact distances (NAVIS's
  // speculative re-rank of the explored set; the rest keep code distances).
  std::uint32_t exact_neighbours = 8;
  float alpha = 1.2f;
  // Back-edges an insert adds: to its nearest `back_edges` out-neighbours
  // (0: to every one, as Vamana and NAVIS do). Each is a list rewritten.
  std::uint32_t back_edges = 0;
  // The entrance graph (the index's MemGraph) follows the inserts: one new
  // vertex in `entrance_every` joins it (0: the share the index was built
  // with), `kEntranceBatch` at a time, in a graph built aside and published
  // whole (NAVIS's live entrance graph). False: the MemGraph stays as built.
  bool entrance_updates = true;
  std::uint32_t entrance_every = 0;
  bool sweep_leftovers = true;  // SweepLeftovers in Prepare
  // Hot pages are rewritten whole: a changed list on an edge page the
  // hot-page cache holds at least this hot (EdgePageCache::Heat) stays with
  // its page mates; the page, copied from the cache with the changed lists
  // put in, is written to a fresh page (out of place, as every write), its
  // room taking the insert's other lists. NAVIS writes dirty cached
  // pages back in place; moving hot lists one by one instead scatters the
  // hot set over pages full of cold lists. 0: never (every changed list
  // moves to the insert's fresh pages).
  std::uint32_t hot_page_heat = 0;
  // Most vertices the layout may hold (the files' and the inserted ones);
  // the RAM for codes and the indirection table is taken for it up front.
  std::uint32_t capacity = 0;
  IoQueueOptions io;
  Status Validate() const;
};

// What one insert did, for the benches' time breakdown and write volume.
// A list's place after an insert (the journal's unit).
struct ListMove {
  std::uint32_t vertex = 0;
  format::EdgeLocation location;
};

// What Create replays over the layout's own table at a reopen.
struct InPlaceRecovery {
  // The current place of every list moved since the layout was written
  // (any order; the last of a vertex's wins).
  std::vector<ListMove> moves;
  // Vertices appended past the layout's own, all published, and their PQ
  // codes (appended * code size bytes).
  std::uint32_t appended = 0;
  std::vector<std::uint8_t> codes;
  // The vector of appended vertex `v` (an owner that keeps every row's
  // vector, as the collection's store does): true with `out` filled, false
  // for a vector nobody needs any more (a deleted vertex; its slot keeps
  // what the file had, or zeros; it is never re-ranked). Given, the vector
  // file's last sector is written only once full and rebuilt from these at
  // a reopen; null, it is written with every insert and a torn one is
  // Corruption.
  std::function<bool(std::uint32_t v, std::span<float> out)> vector_of;
};

struct InsertStats {
  std::uint32_t pages_read = 0;        // position seeking and the neighbours' lists
  std::uint32_t lists_written = 0;     // the new vertex's and every changed neighbour's
  std::uint32_t lists_pruned = 0;      // neighbours' lists cut back to R
  std::uint32_t lists_swept = 0;       // unchanged lists moved to empty their page (SweepLeftovers)
  std::uint32_t edge_pages_written = 0;
  std::uint32_t hot_pages_rewritten = 0;  // of those, cached pages rewritten whole
  std::uint32_t lists_spilled = 0;     // changed lists too long for their hot page's room
  std::uint32_t pages_reused = 0;      // of those, freed pages taken again
  std::uint64_t bytes_written = 0;     // edge pages and the vector sector
  double seek_us = 0, prune_us = 0, write_us = 0, publish_us = 0;
};

// The read-only half of an insert (InPlaceUpdater::Seek): where the new
// vector goes and its list, with the seeker whose fetched pages still hold
// most of its neighbours' lists.
struct SeekResult {
  std::uint32_t repair = 0xFFFFFFFFu;  // SeekRepair: the deleted vertex
  std::vector<float> query;         // in the index's distance space (normalised under cosine)
  std::vector<std::uint32_t> list;  // the new vertex's out-neighbours (RobustPrune)
  std::unique_ptr<search::DecoupledSearchContext> seeker;
  std::uint64_t reuse_seq = 0;      // page reuses counted when the seek began
  InsertStats stats;
};

// An insert written to the files but not yet visible (InPlaceUpdater::Prepare).
struct PreparedInsert {
  std::uint32_t vertex = 0;
  std::vector<ListMove> moves;  // the new vertex's list first
  InsertStats stats;
};

class InPlaceUpdater {
 public:
  // Makes `layout` growable (its indirection table sized for
  // options.capacity) and opens its files for writing. Call before any
  // search context over `layout` is created; `index` and `layout` must
  // outlive the updater. NotSupported for element types other than float32
  // (the vector file's slots are written from float vectors).
  // With `recovery`, `layout` was opened grown (DecoupledGraphData::Open)
  // and the journal is replayed: Corruption when a vertex is then left
  // without a list or a list points past the file.
  static Result<std::unique_ptr<InPlaceUpdater>> Create(const search::GraphIndexData& index,
                                                        search::DecoupledGraphData* layout,
                                                        const InPlaceOptions& options,
                                                        const InPlaceRecovery* recovery = nullptr);
  ~InPlaceUpdater();

  // Inserts `vector` (the index's dimension; normalised here under cosine)
  // and returns its row: Seek, then Prepare and Publish under
  // writer_mutex(). Thread-safe: seeks run in parallel, structural updates
  // one at a time (inserts made at once do not link to each other, as in a
  // parallel Vamana build). InvalidArgument for a bad vector; OutOfRange
  // when the capacity is reached.
  Result<std::uint32_t> Insert(std::span<const float> vector, InsertStats* stats = nullptr);
  // Position seeking over edge pages (step 1) and the new vertex's list
  // (step 2). Thread-safe, with anything.
  Status Seek(std::span<const float> vector, SeekResult* out);
  // With writer_mutex() held: the neighbours' new lists (step 3), written
  // out of place with the vector (one batch of asynchronous writes, step
  // 4). Searches do not see it until Publish, which must follow before the
  // mutex is released; after an error nothing was published.
  Status Prepare(SeekResult* seek, PreparedInsert* out);
  // With writer_mutex() held: switches the indirection table to the
  // prepared lists and publishes the new vertex; returns its row (a
  // repair, whose vertex is kNoVertex, only switches the lists; 0).
  std::uint32_t Publish(PreparedInsert& prepared);

  // A deleted vertex's repair (Xu et al., "In-Place Updates of a Graph
  // Index for Streaming Approximate Nearest Neighbor Search", IP-DiskANN):
  // its in-neighbours, approximated by the live vertices a search for it
  // meets, drop their edge to it and take up to `kRepairEdges` of its
  // out-neighbours instead, nearest first (pruned by RobustPrune when the
  // list overflows), so the graph stays navigable without a rebuild.
  // SeekRepair is thread-safe; PrepareRepair needs writer_mutex() and is
  // followed by Publish. NotFound for a row not deleted; an empty
  // `out->moves` when no list had to change.
  static constexpr std::uint32_t kRepairEdges = 3;
  Status SeekRepair(std::uint64_t row, SeekResult* out);
  Status PrepareRepair(SeekResult* seek, PreparedInsert* out);
  // Compaction of sparse edge pages (in_place_compaction.cc). Every insert
  // takes one list off each of some twenty pages and packs them onto one
  // or two new ones, so pages rarely empty whole: left alone, the file
  // grows with every insert and a walk fetches half-empty pages. With
  // writer_mutex() held, when the live pages exceed the fewest that could
  // hold every list by `slack`: the lists of a neighbourhood of sparse
  // pages (at most `sparse_fill` of a full page's lists left on them,
  // FullPageLists), read, ordered by a walk over their edges so
  // neighbours share a page again, and written out of place
  // like a repair's (followed by Publish). Empty `out->moves` when none is
  // due.
  // With writer_mutex() held, in Prepare: the pages an insert's changed
  // lists leave with at most a quarter of a full page's lists on them, when
  // the position seeking kept them, give those lists up too (they join the
  // insert's, on its fresh pages): the pages empty at once, with no read
  // of their own, and the lists stay beside the neighbourhood they were in.
  void SweepLeftovers(const SeekResult& seek, InsertStats* stats);
  bool CompactionDue(double slack) const;
  Status PrepareCompaction(PreparedInsert* out, double slack, double sparse_fill);
  std::mutex& writer_mutex() { return writer_mu_; }
  // The PQ code of vertex `v` (appended or not).
  std::span<const std::uint8_t> code(std::uint32_t v) const;
  // fdatasync of both files: what Prepare wrote survives power loss.
  Status Sync();
  // The vertex of `row`, or nullopt.
  std::optional<std::uint32_t> VertexOfRow(std::uint64_t row) const;
  std::uint32_t capacity() const { return growth().capacity(); }
  // Tombstones `row`: never returned by a search that starts after this
  // returns. NotFound for a row that does not exist or is deleted already.
  Status Delete(std::uint32_t row);

  std::uint32_t num_vertices() const { return growth().count(); }
  std::uint64_t num_pages() const { return next_page_ - 1; }  // edge pages in the file
  std::size_t free_pages() const { return free_.size(); }
  std::uint64_t live_pages() const { return live_page_count_; }  // pages a list is on

 private:
  struct List {
    std::uint32_t vertex;
    std::vector<std::uint32_t> ids;
    // Its vector, where the edge slots carry one (the packed baseline,
    // format/edge_page.h): taken from the page the list was read from, so
    // that it moves with the list.
    std::vector<std::byte> vector;
  };
  // Fills `list` (ids and vector) from slot `slot` of `page`, which holds it.
  static Status ListFromPage(const format::EdgePageReader& page, std::uint32_t slot, List* list);
  // A hot page rewritten whole (InPlaceOptions::hot_page_heat): its cached
  // bytes and its lists that changed.
  struct HotPage {
    std::uint32_t page = 0;
    std::uint32_t heat = 0;
    std::vector<std::byte> bytes;  // kSector, copied from the cache
    std::vector<List> changed;
  };
  // With writer_mutex() held, in Prepare: takes the changed lists (past
  // lists_[0], the new vertex's) on hot cached pages out of lists_ into
  // `out`, a page each (in_place_hot_pages.cc).
  void TakeHotPages(std::vector<HotPage>* out);
  // Writes hot page `hot` to `page_no` in `buffer`: its current lists, the
  // changed ones as changed (those that no longer fit, having grown, go to
  // `spilled` for the fresh pages), then lists[*next...] while they fit
  // (their places in `placed`); the moves of the lists it holds are
  // appended to `moves`.
  Status BuildHotPage(const HotPage& hot, std::uint32_t page_no, std::byte* buffer,
                      const std::vector<List>& lists, std::size_t* next,
                      std::vector<format::EdgeLocation>* placed, std::vector<ListMove>* moves,
                      std::vector<const List*>* spilled);
  // The lists a full page holds, for the sparse thresholds of the sweep and
  // compaction (lists are packed by length, so a page's count of live lists
  // stands for its fill): fixed-size records, exactly; else a running mean
  // over the pages written full, from the layout's own.
  double FullPageLists() const { return full_page_lists_; }
  InPlaceUpdater(const search::GraphIndexData& index, search::DecoupledGraphData* layout,
                 const InPlaceOptions& options);
  search::DecoupledGrowth& growth() const { return *layout_->growth; }
  // The decoded PQ codes of `vertices` (appended or not), a row each.
  void Decode(std::span<const std::uint32_t> vertices, float* out) const;
  // The current lists of `vertices`: from `seek`'s fetched pages where no
  // page was reused since, else read from their pages, one batch.
  Status ReadLists(std::span<const std::uint32_t> vertices, const SeekResult& seek,
                   std::vector<List>* out, InsertStats* stats);
  // A seeker from the pool (made when none is idle), and back.
  Result<std::unique_ptr<search::DecoupledSearchContext>> TakeSeeker();
  void ReturnSeeker(std::unique_ptr<search::DecoupledSearchContext> seeker);
  // Cuts `list` back to R by RobustPrune on decoded codes.
  void PruneList(List* list);
  std::uint32_t AllocatePage(InsertStats* stats);
  Status Replay(const InPlaceRecovery& recovery);
  // Writes `lists` onto fresh pages and (with_vector) the tail vector
  // sector, one batch; with `hot`, the hot pages first (BuildHotPage), the
  // moves of their unchanged and changed lists appended to `hot_moves`.
  Status WriteOut(const std::vector<List>& lists, std::vector<format::EdgeLocation>* placed,
                  InsertStats* stats, bool with_vector = true,
                  const std::vector<HotPage>* hot = nullptr,
                  std::vector<ListMove>* hot_moves = nullptr);

  const search::GraphIndexData& index_;
  search::DecoupledGraphData* layout_;
  InPlaceOptions options_;
  format::EdgePageGeometry geometry_;
  std::mutex seekers_mu_;
  std::vector<std::unique_ptr<search::DecoupledSearchContext>> seekers_;  // idle
  std::mutex writer_mu_;
  // Page reuses so far, and per page the count when it was last reused: a
  // seek's copy of a page is current if the page was not reused since the
  // seek began.
  std::atomic<std::uint64_t> reuse_seq_{0};
  std::vector<std::uint64_t> reused_at_;
  DirectFile edge_file_, vector_file_;
  std::unique_ptr<IoQueue> queue_;
  IoFileId edge_id_ = 0, vector_id_ = 0;
  // Bytes the files hold, written or grown ahead of the writes (Reserve).
  std::uint64_t edge_reserved_ = 0, vector_reserved_ = 0;
  BufferPool buffers_;
  std::vector<IoRequest> requests_;
  std::vector<std::uint16_t> live_;  // page -> lists on it still current (index 0 unused)
  std::uint64_t live_page_count_ = 0;  // pages with live_ > 0
  double full_page_lists_ = 1;         // FullPageLists
  std::uint32_t compact_cursor_ = 1;   // where the next search for a sparse page starts
  // Publishes that changed the page table (a page turns sparse only by one:
  // a list leaving it, or a write that filled it part way), and their count
  // and the sparse threshold when a scan of the whole page table last found
  // no sparse page: until the table changes, a scan at that threshold or
  // below would find none again.
  std::uint64_t table_changes_ = 0;
  std::uint64_t none_sparse_changes_ = ~0ull;
  std::uint16_t none_sparse_below_ = 0;
  struct Retired {
    std::uint32_t page;
    std::uint64_t epoch;
  };
  std::deque<Retired> free_;  // pages whose lists have all moved, oldest first
  std::uint64_t next_page_ = 1;
  std::uint32_t epoch_ = 0;   // write epoch stamped on edge pages (> 0: not the layout's own)
  std::vector<List> lists_;   // the prepared insert's lists (Prepare -> Publish)
  std::vector<float> prepared_vector_;  // the prepared insert's vector (distance space)
  // Entrance graph samples waiting to join it.
  static constexpr std::uint32_t kEntranceBatch = 64;
  std::uint32_t entrance_every_ = 0;  // 0: off
  std::vector<float> samples_;
  std::vector<std::uint32_t> sample_slots_;
  // Adds vertex `v` (its vector `x`) to the samples when it is one, and
  // publishes an extended entrance graph once a batch is ready.
  void Sample(std::uint32_t v, std::span<const float> x);
  void ExtendEntrance();
  AlignedBuffer tail_;         // the vector file's last sector
  std::uint64_t tail_sector_ = 0;
  // The tail sector is written once full only (InPlaceRecovery::vector_of
  // rebuilds it after a crash); the prepared insert's write includes it.
  bool defer_tail_ = false;
  bool tail_write_due_ = true;
  graph::PruneScratch scratch_;
  std::vector<float> rows_;
};

}  // namespace strata::update

#endif  // STRATA_UPDATE_IN_PLACE_UPDATER_H_
