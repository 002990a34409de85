// Collection::Impl: the state shared by the collection's source files
// (open and recovery, writes, search, merges). Not a public header.
//
// Locking: `write_mu_` serialises writes, merge starts and merge switches
// (sequence numbers are handed out under it); `state_mu_` guards only the
// (state, visible sequence) pair that a search copies at its start;
// `merge_mu_` serialises merges. Order: merge_mu_ -> write_mu_ -> state_mu_.
#ifndef STRATA_COLLECTION_COLLECTION_IMPL_H_
#define STRATA_COLLECTION_COLLECTION_IMPL_H_

#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "collection/graph_label_dictionary.h"
#include "collection/in_place_journal.h"
#include "collection/index_version.h"
#include "collection/pending_graph.h"
#include "collection/pending_set.h"
#include "filter/payload_index.h"
#include "strata/collection.h"
#include "strata/labels.h"

namespace strata {

// What a search holds for its whole duration: one index version (or none in
// the flat phase) and the pending set that goes with it.
struct CollectionState {
  std::shared_ptr<collection::IndexVersion> version;  // null: flat phase
  std::shared_ptr<collection::PendingSet> pending;
  // FreshDiskANN's TempIndex: an in-RAM graph over the pending entries,
  // caught up by the indexer thread; searches walk it and scan the rest.
  std::shared_ptr<collection::PendingGraph> pending_graph;
};
// A state's pending set and graph over it.
Status MakePending(std::uint32_t dim, Metric metric, CollectionState* state);

struct CollectionSnapshot {
  std::shared_ptr<const CollectionState> state;
  std::uint64_t seq = 0;
  // The payload index current at the snapshot (never null; no fields when
  // none are declared). It follows the writes, not the snapshot.
  std::shared_ptr<const filter::PayloadIndex> payload_index;
};

// The options fixed at creation, as stored in RocksDB ('m' "options").
struct StoredCollectionOptions {
  std::uint32_t dim = 0;
  Metric metric = Metric::kL2;
  ElementType element_type = ElementType::kFloat32;
  std::string index_type = "graph";
  GraphBuildOptions graph;
  IvfBuildOptions ivf;
  std::string graph_label_field;  // CollectionOptions::graph_label_field
  UpdateMode update_mode = UpdateMode::kBuffered;
};
std::string StoredOptionsToJson(const StoredCollectionOptions& o);
Result<StoredCollectionOptions> StoredOptionsFromJson(const std::string& json);

struct Collection::Impl {
  ~Impl();

  // ---- fixed at open ----
  std::string dir;
  CollectionOptions options;
  StoredCollectionOptions stored;
  std::size_t vector_bytes = 0;  // dim * element size (stored form)
  int lock_fd = -1;
  std::unique_ptr<rocksdb::DB> db;
  rocksdb::WriteOptions write_options;  // never sync: see group_commit
  OpenOptions index_open;               // options.open with the node cache within the memory budget
  // Where the merge and indexer threads run (empty: anywhere), chosen at
  // open from options.background_cpus (collection_open.cc).
  std::vector<unsigned> background_cpus;
  // Puts the calling background thread on background_cpus.
  void PlaceBackgroundThread() const;
  // For the threads that fold writes into the index (merges, the in-place
  // applier): a lower priority (nice 10; the build threads a merge starts
  // inherit it) and background_cpus, so that searches keep their share of
  // the cores whichever update mode feeds the index.
  void YieldToSearches() const;
  // Durability::kSync: group commit. A write appends its batch to the log
  // unsynced under write_mu, applies it to RAM, releases write_mu, and then
  // waits in SyncThrough for one fsync that covers it: the writers that
  // queued behind one fsync share the next (the group commit of Gray &
  // Reuter, "Transaction Processing"; DeWitt et al., "Implementation
  // Techniques for Main Memory Database Systems"). A write becomes visible
  // to searches only once durable.
  bool group_commit = false;

  // ---- writes (guarded by write_mu_) ----
  std::mutex write_mu;
  std::uint64_t last_seq = 0;
  // Where each pending id's live copy is in the current pending set.
  std::unordered_map<VectorId, std::uint32_t> pending_pos;
  // Tombstones in RocksDB: id -> sequence of the write that made it.
  std::unordered_map<VectorId, std::uint64_t> tombstones;
  std::uint64_t version_seq = 0;  // last write folded into the current version
  // The last in-place journal batch's sequence (in_place_journal.h): the
  // next batch takes one more.
  std::uint64_t journal_seq = 0;
  std::atomic<std::uint64_t> live{0};
  // The last write in the log and applied to RAM (set under write_mu), and
  // the last one covered by an fsync of the log (group commit).
  std::atomic<std::uint64_t> logged_seq{0};
  std::atomic<std::uint64_t> durable_seq{0};
  std::mutex sync_mu;  // one log fsync at a time (group commit leader)
  std::atomic<std::uint64_t> log_syncs{0};
  std::condition_variable merge_done_cv;  // with write_mu: a merge switched or failed
  std::uint32_t budget_waiters = 0;       // writers waiting for a merge to drain the memory budget

  // ---- published to searches (guarded by state_mu_) ----
  mutable std::mutex state_mu;
  std::shared_ptr<const CollectionState> state;
  std::uint64_t visible_seq = 0;
  // Updated by writers under write_mu; replaced (CreatePayloadIndex) under
  // write_mu and state_mu.
  std::shared_ptr<filter::PayloadIndex> payload_index;

  // ---- merges ----
  std::mutex merge_mu;  // one merge at a time
  std::atomic<bool> merging{false};
  std::atomic<std::uint64_t> merges_done{0};
  std::atomic<std::uint64_t> streaming_merges{0};
  std::atomic<double> last_merge_seconds{0};
  std::atomic<double> first_build_seconds{0};
  Status last_merge_error;  // guarded by write_mu

  // ---- background threads ----
  std::mutex bg_mu;
  std::condition_variable bg_cv;       // merge and sync threads
  std::condition_variable indexer_cv;  // the pending-graph indexer
  bool stopping = false;               // guarded by bg_mu
  bool merge_wanted = false;           // guarded by bg_mu
  // StopMerges: no merge starts any more, and the running one's build sees
  // merge_stop (every build and merge option carries its token).
  bool merges_stopped = false;  // guarded by bg_mu
  std::stop_source merge_stop;
  // Merge() calls handed to the merge thread, and how many a finished merge
  // answered, with its status (guarded by bg_mu; waiters use bg_cv).
  std::uint64_t merge_requests = 0;
  std::uint64_t merge_requests_served = 0;
  Status merge_request_status;
  std::thread merge_thread;
  std::thread sync_thread;
  std::thread indexer_thread;
  bool closed = false;

  // ---- update_mode in_place (collection_in_place.cc) ----
  bool in_place() const { return stored.update_mode == UpdateMode::kInPlace; }
  // Entries of the current pending set before this position are applied to
  // the graph or dead (guarded by write_mu; 0 after a new pending set).
  std::uint32_t pending_applied = 0;
  // Entries claimed by applier threads and not finished, and the next
  // position to claim (guarded by write_mu).
  std::set<std::uint32_t> applying;
  std::uint32_t pending_claimed = 0;
  std::atomic<std::uint64_t> in_place_inserts{0};
  std::atomic<std::uint64_t> in_place_hot_pages_rewritten{0};
  std::atomic<std::uint64_t> in_place_insert_bytes_written{0};
  std::atomic<std::uint64_t> in_place_insert_lists_changed{0};
  std::atomic<std::uint64_t> in_place_upkeep_bytes_written{0};  // repairs and compactions
  Status last_apply_error;             // guarded by write_mu
  std::condition_variable applier_cv;  // with bg_mu
  std::vector<std::thread> applier_threads;
  // Opens version `number` in `vdir`: an in-place version with `journal`
  // replayed (none: a fresh one), or a static one.
  Result<std::shared_ptr<collection::IndexVersion>> LoadVersion(
      std::uint64_t number, const std::string& vdir,
      const collection::LoadedJournal* journal = nullptr) const;
  // Applies the next pending entry to the in-place graph: prepares the
  // insert out of place, journals it with the removal of its 'p' key in one
  // batch, then publishes it. `applied` says whether one was; `held_back`
  // (optional) whether entries are pending but wait for the applies in
  // flight (a rotation is due).
  Status ApplyOne(bool* applied, bool* held_back = nullptr);
  // Re-links the in-neighbours of the next deleted row (IP-DiskANN's repair),
  // journalled as an insert's moves are. `repaired` says whether one was.
  Status RepairOne(bool* repaired);
  std::atomic<std::uint64_t> in_place_repairs{0};
  // Repacks sparse edge pages when the pages lists are on exceed the fewest
  // that hold them by `slack`, taking pages at most `sparse_fill` full
  // (InPlaceGraph::PrepareCompaction), journalled as a repair is.
  // `compacted` says whether it did.
  Status CompactOne(double slack, double sparse_fill, bool* compacted);
  std::atomic<std::uint64_t> in_place_compactions{0};
  // When an applier thread last applied a write or repaired a delete
  // (steady_clock ticks): compaction to the idle slack waits for writes to
  // pause, on every applier thread.
  std::atomic<std::int64_t> last_write_work{0};
  // With the prepared moves' writer lock held: syncs the pages (sync mode),
  // journals the moves in one batch and publishes them, unless the version
  // `st` is no longer current.
  Status JournalAndCommitMoves(const CollectionState& st, PreparedInPlaceInsert* prepared,
                               const char* what);
  void ApplierLoop();
  void WakeApplier();
  // With write_mu held: whether the applied entries are enough, and most of
  // the set, to drop them; and a new pending set without them, when they are
  // (and no entry is being applied: claims name positions in the set).
  bool RotationDue() const;
  Status RotatePending();

  CollectionSnapshot Snapshot() const {
    std::lock_guard<std::mutex> lock(state_mu);
    return {state, visible_seq, payload_index};
  }
  // Publishes a new state (call with write_mu held) and/or makes the
  // writes up to `seq` visible (visibility only grows: a group commit's
  // leader publishes outside write_mu).
  void Publish(std::shared_ptr<const CollectionState> next, std::uint64_t seq) {
    std::lock_guard<std::mutex> lock(state_mu);
    if (next) state = std::move(next);
    visible_seq = std::max(visible_seq, seq);
  }
  // A write with sequence `seq`, logged and applied to RAM, is acknowledged:
  // in async mode visible at once; in sync mode (group commit) after an
  // fsync of the log covers it (collection_write.cc). Call after write_mu
  // is released in sync mode; with it held in async mode.
  Status Acknowledge(std::uint64_t seq);
  // Records that every write up to `seq` is in a synced log.
  void MarkDurable(std::uint64_t seq);
  const CollectionState& current() const { return *state; }  // with write_mu held

  // The 'v' records of `ids` (latest values): values[i] with statuses[i]
  // (NotFound for an absent id) (collection_write.cc).
  std::vector<rocksdb::Status> GetRecords(std::span<const VectorId> ids,
                                          std::vector<std::string>* values) const;
  // A payload index over `fields`, filled from every stored record
  // (collection_open.cc); with write_mu held or before the collection runs.
  Result<std::shared_ptr<filter::PayloadIndex>> BuildPayloadIndex(
      std::vector<PayloadFieldSpec> fields) const;
  // Stores the indexed field list ('m' "payload_index").
  Status StorePayloadFields(const std::vector<PayloadFieldSpec>& fields);
  // At open: the stored fields plus the new ones of `given`, stored, and
  // payload_index built over them.
  Status OpenPayloadIndex(const std::vector<PayloadFieldSpec>& given);
  // Label-aware graphs (stored.graph_label_field): its position among
  // `index`'s fields when indexed as integer or keyword, else -1.
  int LabelFieldPosition(const filter::PayloadIndex& index) const;
  // Row i's labels: the label field's integer values in [0, 2^32 - 2] of
  // ids[i], or its keywords' labels in graph_keywords (given to the new
  // ones, stored); from the merge thread.
  Result<LabelSets> GraphLabels(const filter::PayloadIndex& index, std::span<const VectorId> ids);
  // The keyword labels of a label-aware graph on a keyword field (loaded at
  // open; grown by merges), and whether the label field is one (set at open:
  // its type never changes).
  collection::GraphLabelDictionary graph_keywords;
  bool graph_label_keyword = false;
  // Store <-> float conversions (collection_write.cc).
  Status CheckAndStore(std::span<const float> vector, std::byte* out) const;
  void LoadFloat(const std::byte* stored, float* out) const;

  // Merge the pending list and tombstones into a new version
  // (collection_merge.cc). `threads` build threads (0 = all cores).
  // With `first_only`, only when no version exists yet (the threshold build).
  Status RunMerge(unsigned threads, bool first_only = false);
  void RequestMerge();
  void MergeLoop();
  void SyncLoop();
  void IndexerLoop();
  void WakeIndexer();
  bool MergeDue() const;  // with write_mu held
  std::string IndexRoot() const { return dir + "/index"; }
  std::string VersionDir(std::uint64_t v) const;
};

// RocksDB status -> ours.
Status FromRocks(const rocksdb::Status& s, const std::string& what);

}  // namespace strata

#endif  // STRATA_COLLECTION_COLLECTION_IMPL_H_
