// One immutable SSD index version of a collection: the opened index, the
// slot -> user id map stored beside it (slots.bin), and a per-slot death
// mark for the multi-version view of deletes (a slot is dead for snapshots
// at or after its mark). Searchers are pooled per version.
//
// slots.bin: "STRSLOT1" magic (8 B), u64 count, u64 XXH3-64 of the id
// bytes, then count u64 LE user ids (slot i = the index's row id i).
//
// Thread-safety: everything but MarkDead is read-only after Load; MarkDead
// is called by the one writer, readers see marks through atomics. The
// directory is removed when the last holder drops a version marked obsolete.
//
// In-place versions (CollectionOptions::update_mode in_place, LoadInPlace)
// also take rows after Load: the graph is searched on its decoupled layout
// (`decoupled/` in the version directory) and grows by in-place inserts
// (strata/in_place_graph.h), one writer (the collection's applier) at a
// time. A row is staged (its id and the write sequence it was born at)
// before the graph publishes it, and counted in size() after; a row is
// live at snapshot S when born <= S < dead. An id may have several rows
// (a replaced vector's old row stays, dead, as a routing vertex): SlotOf
// gives the newest.
#ifndef STRATA_COLLECTION_INDEX_VERSION_H_
#define STRATA_COLLECTION_INDEX_VERSION_H_

#include <atomic>
#include <deque>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "collection/pending_set.h"
#include "strata/in_place_graph.h"
#include "strata/index.h"
#include "strata/result.h"
#include "strata/search.h"

namespace strata::collection {

inline constexpr char kSlotsFile[] = "slots.bin";

// Writes `dir`/slots.bin durably (temp file, fsync, rename, fsync dir).
Status WriteSlotsFile(const std::string& dir, std::span<const VectorId> slot_ids);
Result<std::vector<VectorId>> ReadSlotsFile(const std::string& dir);

class IndexVersion {
 public:
  // Opens version `number` in `dir`: the index and slots.bin, checking that
  // they agree (Corruption otherwise).
  static Result<std::shared_ptr<IndexVersion>> Load(std::uint64_t number, const std::string& dir,
                                                    const OpenOptions& options);

  // An in-place version: the decoupled layout is written into `dir`/decoupled
  // first if absent (a page shuffle of the edge lists), then the graph is
  // opened for updates, replaying `recovery` (the collection's journal of
  // this version). `appended` holds the id and birth sequence of each row
  // the journal appended, in row order; a row whose id has a newer row is
  // dead.
  struct InPlaceSetup {
    InPlaceGraphOptions graph;
    InPlaceRecovery recovery;
    std::vector<std::pair<VectorId, std::uint64_t>> appended;
    std::uint32_t first_appended = 0;  // the journal's first appended vertex
    unsigned threads = 0;  // for writing the layout
    bool vectors_in_edge_pages = false;  // CollectionOptions::in_place_packed_baseline
  };
  static Result<std::shared_ptr<IndexVersion>> LoadInPlace(std::uint64_t number,
                                                           const std::string& dir,
                                                           const OpenOptions& options,
                                                           InPlaceSetup setup);
  ~IndexVersion();

  std::uint64_t number() const { return number_; }
  const std::string& dir() const { return dir_; }
  const Index& index() const { return *index_; }
  // Rows searches may meet (acquire: their ids and marks are visible).
  std::uint64_t size() const { return size_.load(std::memory_order_acquire); }
  VectorId user_id(std::uint64_t slot) const { return slot_ids_[slot]; }
  std::uint64_t born(std::uint64_t slot) const {
    return born_ ? born_[slot].load(std::memory_order_acquire) : 0;
  }

  // ---- in-place versions (the applier's side) ----
  bool in_place() const { return graph_ != nullptr; }
  InPlaceGraph* graph() const { return graph_.get(); }
  // The next row an insert will get, and whether one more fits.
  std::uint64_t next_row() const { return graph_->num_rows(); }
  bool full() const { return graph_->num_vertices() >= graph_->capacity(); }
  // Before the graph publishes `row`: its id and birth; dead at `dead`
  // (kNeverDead: live).
  void StageRow(std::uint64_t row, VectorId id, std::uint64_t born, std::uint64_t dead);
  // After it published `row`: counted in size(), found by SlotOf.
  void PublishRow(std::uint64_t row);
  // Rows deleted since open whose in-neighbours are still to be re-linked
  // (InPlaceGraph::PrepareRepair); not durable: a row left unrepaired by a
  // crash only costs some navigability until the next rebuild.
  void EnqueueRepair(std::uint64_t row);
  std::optional<std::uint64_t> TakeRepair();
  std::size_t RepairsQueued() const;
  // The slot holding user id `id`, if this version has one.
  std::optional<std::uint32_t> SlotOf(VectorId id) const;
  // Appends the slots of those of `ids` the version holds, in an unspecified
  // order. For many ids: sorted, then found in one pass over the id table
  // rather than a binary search each (13 % of a 10 %-selective search's CPU).
  void AppendSlotsOf(std::span<const VectorId> ids, std::vector<std::uint64_t>* slots) const;

  // Dead for snapshots at or after `seq`; in an in-place version also never
  // chosen as a new row's neighbour again.
  void MarkDead(std::uint32_t slot, std::uint64_t seq);
  bool LiveAt(std::uint64_t slot, std::uint64_t snapshot) const {
    return born(slot) <= snapshot && dead_[slot].load(std::memory_order_acquire) > snapshot;
  }
  std::uint64_t dead_count() const { return dead_count_.load(std::memory_order_relaxed); }
  // RAM of the index plus the id maps and marks.
  std::size_t memory_bytes() const;

  // A searcher able to run `params` (reused from the pool when it fits).
  struct PooledSearcher {
    std::unique_ptr<Searcher> searcher;
    std::uint32_t max_width = 0;
    // One bit per slot, for a filtered search's candidate rows: all zero
    // whenever the searcher is in the pool (its user clears the bits it
    // set), so a query pays for its candidates, not for a bitmap of the
    // whole index (128 KB at 1M slots, page faults and all).
    std::vector<std::uint64_t> row_bits;
  };
  Result<PooledSearcher> Acquire(const SearchParams& params) const;
  void Release(PooledSearcher s) const;

  // Remove the directory when the last holder lets go.
  void MarkObsolete() { obsolete_.store(true); }

 private:
  IndexVersion() = default;

  // The ids, the index and the marks for `rows` rows of which `capacity`
  // may be held.
  Status Init(std::vector<VectorId> ids, std::uint64_t capacity);

  std::uint64_t number_ = 0;
  std::string dir_;
  std::unique_ptr<Index> owned_index_;  // a static version's index
  std::unique_ptr<InPlaceGraph> graph_;  // an in-place version's graph
  const Index* index_ = nullptr;
  std::vector<VectorId> slot_ids_;  // `capacity` entries; rows below size() set
  std::atomic<std::uint64_t> size_{0};
  std::uint64_t base_size_ = 0;     // rows of slots.bin (looked up by BuildIdTable / ids_sorted_)
  std::unique_ptr<std::atomic<std::uint64_t>[]> born_;  // in-place versions only
  // In-place versions: id -> newest appended row.
  mutable std::shared_mutex appended_mu_;
  std::unordered_map<VectorId, std::uint32_t> appended_by_id_;
  mutable std::mutex repairs_mu_;
  std::deque<std::uint64_t> repairs_;
  Status BuildIdTable();  // by_id_ from slot_ids_; Corruption for a repeated id
  // slot_ids_ strictly increasing: SlotOf searches it, by_id_ stays empty.
  bool ids_sorted_ = false;
  std::vector<std::pair<VectorId, std::uint32_t>> by_id_;  // sorted by id
  std::unique_ptr<std::atomic<std::uint64_t>[]> dead_;
  std::atomic<std::uint64_t> dead_count_{0};
  std::atomic<bool> obsolete_{false};
  mutable std::mutex pool_mu_;
  mutable std::vector<PooledSearcher> pool_;  // guarded by pool_mu_
};

// Accepts the slots of `version` live at `snapshot` (tombstones checked
// inside the walk, strata/search.h IdFilter).
class LiveSlotFilter final : public IdFilter {
 public:
  LiveSlotFilter(const IndexVersion& version, std::uint64_t snapshot)
      : version_(version), snapshot_(snapshot) {}
  bool Accept(std::uint64_t id) const override {
    return id < version_.size() && version_.LiveAt(id, snapshot_);
  }

 private:
  const IndexVersion& version_;
  std::uint64_t snapshot_;
};

}  // namespace strata::collection

#endif  // STRATA_COLLECTION_INDEX_VERSION_H_
