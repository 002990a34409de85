// update_mode in_place: the applier, which moves acknowledged writes from
// the pending list into the SSD graph itself (NAVIS; Sun et al., "NAVIS:
// Concurrent Search and Update with Low Position-Seeking Overhead in On-SSD
// Graph-Based Vector Search"), and the loading of in-place versions.
//
// A write is acknowledged as in the buffered mode (a RocksDB batch with its
// record and 'p' key, then the in-RAM pending set); the applier then takes
// the pending entries in order, on in_place_threads threads:
//   1. under write_mu: the next entry is claimed;
//   2. InPlaceGraph::Prepare seeks the position over edge pages (on every
//      applier thread at once), then, under the graph's writer lock,
//      writes the vector and every changed edge list out of place (in sync
//      mode then fdatasyncs both files);
//   3. under write_mu (the writer lock still held): the row is staged (id
//      and birth sequence), one RocksDB batch journals the moved lists and the
//      appended vertex and removes the entry's 'p' key (if it is still the
//      id's current copy); then the graph switches its table, the row is
//      published, and the pending entry is marked dead from its own birth
//      on, so a search finds the write in the graph or in the pending list.
//      A search scans the pending list before it walks the graph: an entry
//      it misses in the list was published in the graph before the scan.
// A crash between 2 and 3 leaves pages nothing names (free at the next
// open) and the 'p' key, so the write is applied again. A write replaced or
// deleted while it was being applied is published dead at that sequence.
#include <chrono>
#include <memory>
#include <optional>

#include "collection/collection_impl.h"
#include "collection/store_keys.h"

namespace strata {
namespace {

// The pending set is rebuilt without its applied entries once they are at
// least this many and most of it (a search skips a dead entry at the cost of
// two loads; the rebuild copies the few unapplied ones).
constexpr std::uint32_t kRotateApplied = 4096;

// Compaction when no write is pending: to 5 % over the fewest pages that
// hold every list, taking pages at most four fifths full. synth1m 100k +
// 60k inserts (31.8 pages a query on a fresh build of the 160k): a quarter
// of slack, pages at most a third full, left 23.4k pages with lists and 43.9
// pages a query after the writes; at most half full 18.2k and 40.4; these
// 15.3k and 39.3. What is left is which lists share a page, not how full
// they are (ordering each write's lists by their edges among themselves,
// or gathering 256 lists a compaction, changed nothing).
// Once writes have paused (CollectionOptions::in_place_compaction_pause_ms):
// between the batches of a steady stream the applier is idle too, and
// compacting to 5 % there cost the searches a third of their QPS by the end
// of the stream.
constexpr double kIdleCompactionSlack = 0.05;
constexpr double kIdleSparseFill = 0.8;
// Beside writes: only past twice the fewest, pages at most a third full.
constexpr double kBusyCompactionSlack = 1.0;
constexpr double kBusySparseFill = 1.0 / 3.0;

// A fresh in-place version may take this many more rows than it was built
// with (and at least as many again): its RAM for codes, table and ids is
// reserved up front (about 60 B a row at 32-byte codes).
constexpr std::uint64_t kMinHeadroom = 65536;

}  // namespace

Result<std::shared_ptr<collection::IndexVersion>> Collection::Impl::LoadVersion(
    std::uint64_t number, const std::string& vdir, const collection::LoadedJournal* journal) const {
  if (!in_place()) return collection::IndexVersion::Load(number, vdir, index_open);
  collection::IndexVersion::InPlaceSetup setup;
  STRATA_ASSIGN_OR_RETURN(std::vector<VectorId> ids, collection::ReadSlotsFile(vdir));
  const std::uint64_t base = ids.size();
  std::uint64_t appended = journal != nullptr ? journal->appended.size() : 0;
  setup.graph.capacity = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(0xFFFFFFF0u, base + appended + std::max(base, kMinHeadroom)));
  setup.graph.R = stored.graph.R;
  setup.graph.L = options.in_place_L;
  setup.graph.back_edges = options.in_place_back_edges;
  setup.graph.sweep_leftovers = options.in_place_compaction;
  setup.graph.hot_page_heat = options.in_place_hot_page_heat;
  setup.graph.alpha = stored.graph.alpha;
  setup.threads = options.merge_threads;
  setup.vectors_in_edge_pages = options.in_place_packed_baseline;
  if (journal != nullptr) {
    setup.recovery = journal->recovery;
    setup.appended = journal->appended;
    setup.first_appended = journal->first_appended;
  }
  // A torn last vector sector is rebuilt from the records of the rows that
  // are still their id's current copy (born at the record's sequence).
  std::vector<std::pair<VectorId, std::uint64_t>> rows = setup.appended;
  const auto base_vertices = setup.first_appended;
  setup.recovery.vector_of = [this, rows, base_vertices](std::uint32_t v, std::span<float> out) {
    if (v < base_vertices || v - base_vertices >= rows.size()) return false;
    const auto& [id, born] = rows[v - base_vertices];
    std::string value;
    if (!db->Get(rocksdb::ReadOptions(), collection::IdKey(collection::kVectorPrefix, id), &value)
             .ok()) {
      return false;
    }
    auto rec = collection::DecodeRecord(value, vector_bytes);
    if (!rec.ok() || rec->seq != born) return false;
    LoadFloat(reinterpret_cast<const std::byte*>(rec->vector.data()), out.data());
    return true;
  };
  return collection::IndexVersion::LoadInPlace(number, vdir, index_open, std::move(setup));
}

void Collection::Impl::WakeApplier() {
  if (in_place()) applier_cv.notify_one();
}

bool Collection::Impl::RotationDue() const {
  return pending_applied >= kRotateApplied && pending_applied * 2ull >= current().pending->size();
}

Status Collection::Impl::RotatePending() {
  if (!applying.empty() || !RotationDue()) return Status::OK();
  const CollectionState& cur = current();
  const collection::PendingSet& p = *cur.pending;
  std::uint64_t visible = 0;
  {
    std::lock_guard<std::mutex> lock(state_mu);
    visible = visible_seq;
  }
  auto next = std::make_shared<CollectionState>();
  next->version = cur.version;
  STRATA_RETURN_IF_ERROR(MakePending(stored.dim, stored.metric, next.get()));
  // Entries a new snapshot may still see: the unapplied ones, and those
  // killed by writes not yet visible (sync mode's group commit).
  for (std::uint32_t pos = pending_applied; pos < p.size(); ++pos) {
    const std::uint64_t dead = p.dead_seq(pos);
    if (dead <= visible) continue;
    STRATA_ASSIGN_OR_RETURN(std::uint32_t at,
                            next->pending->Append(p.id(pos), p.vector(pos), p.insert_seq(pos)));
    if (dead != collection::kNeverDead) {
      next->pending->MarkDead(at, dead);
    } else {
      pending_pos[p.id(pos)] = at;
    }
  }
  pending_applied = 0;
  pending_claimed = 0;
  Publish(std::move(next), 0);
  applier_cv.notify_all();  // appliers that held back for the rotation
  return Status::OK();
}

Status Collection::Impl::ApplyOne(bool* applied, bool* held_back) {
  *applied = false;
  if (held_back != nullptr) *held_back = false;
  std::shared_ptr<const CollectionState> st;
  std::uint32_t pos = 0;
  VectorId id = 0;
  std::uint64_t born = 0;
  std::vector<float> vector(stored.dim);
  {
    std::lock_guard<std::mutex> lock(write_mu);
    if (merging || !state || !state->version || !state->version->in_place()) return Status::OK();
    if (state->version->full()) {
      if (MergeDue()) RequestMerge();
      return Status::OK();
    }
    // A set left to grow with applied entries slows every search's scan
    // of it (and past kInPlaceScanOnly takes the indexer's CPU): with
    // several appliers one is nearly always mid-apply, so new claims wait
    // for those in flight to finish and the last one out rotates.
    if (RotationDue()) {
      if (!applying.empty()) {
        if (held_back != nullptr) *held_back = true;
        return Status::OK();
      }
      STRATA_RETURN_IF_ERROR(RotatePending());
    }
    st = state;
    const collection::PendingSet& p = *st->pending;
    pos = std::max(pending_applied, pending_claimed);
    while (pos < p.size() && (p.dead_seq(pos) != collection::kNeverDead || applying.count(pos))) {
      ++pos;
    }
    pending_claimed = pos;
    if (applying.empty()) pending_applied = pos;
    if (pos >= p.size()) return RotatePending();
    pending_claimed = pos + 1;
    applying.insert(pos);
    id = p.id(pos);
    born = p.insert_seq(pos);
    std::copy_n(p.vector(pos), stored.dim, vector.data());
  }
  // Whatever happens below, the claim ends (an entry not applied is
  // claimed again from pending_applied).
  struct Unclaim {
    Collection::Impl* m;
    std::uint32_t pos;
    const CollectionState* st;
    bool done = false;
    void End() {
      if (done) return;
      done = true;
      m->applying.erase(pos);
      if (m->state.get() != st) return;
      const std::uint32_t first = m->applying.empty() ? m->pending_claimed : *m->applying.begin();
      if (!applied_here) m->pending_claimed = std::min(m->pending_claimed, pos);
      m->pending_applied = std::min(first, m->pending_claimed);
    }
    bool applied_here = false;
    ~Unclaim() {
      if (!done) {
        std::lock_guard<std::mutex> lock(m->write_mu);
        End();
      }
    }
  } claim{this, pos, st.get()};

  InPlaceGraph& graph = *st->version->graph();
  PreparedInPlaceInsert prepared;  // holds the graph's writer lock from here to Commit
  STRATA_RETURN_IF_ERROR(graph.Prepare(vector, &prepared));
  // Power-loss safety: the pages are on the device before the journal
  // that names them can be.
  if (group_commit) STRATA_RETURN_IF_ERROR(graph.Sync());

  std::lock_guard<std::mutex> lock(write_mu);
  if (state->version != st->version || state->pending != st->pending) {
    claim.End();
    return Status::OK();  // a merge switched meanwhile: the write is in its version
  }
  collection::PendingSet& p = *st->pending;
  const std::uint64_t row = prepared.row;
  st->version->StageRow(row, id, born, collection::kNeverDead);
  const std::uint64_t dead = p.dead_seq(pos);
  rocksdb::WriteBatch batch;
  collection::JournalInsert(st->version->number(), ++journal_seq, prepared, id, born, &batch);
  auto current_copy = pending_pos.find(id);
  const bool is_current = current_copy != pending_pos.end() && current_copy->second == pos;
  if (is_current) batch.Delete(collection::IdKey(collection::kPendingPrefix, id));
  rocksdb::WriteOptions wo = write_options;
  wo.sync = group_commit;
  if (Status w = FromRocks(db->Write(wo, &batch), "in-place apply: journal"); !w.ok()) {
    claim.End();
    return w;  // nothing names the written pages; the entry is applied again
  }
  if (dead != collection::kNeverDead) st->version->StageRow(row, id, born, dead);
  graph.Commit(&prepared);
  st->version->PublishRow(row);
  if (dead != collection::kNeverDead) (void)graph.Delete(static_cast<std::uint32_t>(row));
  if (is_current) pending_pos.erase(current_copy);
  p.MarkDead(pos, born);  // the graph holds it from now on
  claim.applied_here = true;
  claim.End();
  in_place_inserts++;
  in_place_hot_pages_rewritten += prepared.report.hot_pages_rewritten;
  in_place_insert_bytes_written += prepared.report.bytes_written;
  in_place_insert_lists_changed += prepared.report.lists_written - prepared.report.lists_swept;
  *applied = true;
  if (st->version->full() && MergeDue()) RequestMerge();
  return RotatePending();
}

Status Collection::Impl::RepairOne(bool* repaired) {
  *repaired = false;
  std::shared_ptr<const CollectionState> st;
  std::optional<std::uint64_t> row;
  {
    std::lock_guard<std::mutex> lock(write_mu);
    if (merging || !state || !state->version || !state->version->in_place()) return Status::OK();
    st = state;
    row = st->version->TakeRepair();
    if (!row) return Status::OK();
  }
  InPlaceGraph& graph = *st->version->graph();
  PreparedInPlaceInsert prepared;  // holds the graph's writer lock until Commit
  Status s = graph.PrepareRepair(*row, &prepared);
  if (s.code() == StatusCode::kNotFound) return Status::OK();  // not in the graph (yet)
  STRATA_RETURN_IF_ERROR(s);
  *repaired = true;
  if (prepared.moves.empty()) {
    graph.Commit(&prepared);
    return Status::OK();
  }
  const std::uint64_t bytes = prepared.report.bytes_written;
  STRATA_RETURN_IF_ERROR(JournalAndCommitMoves(*st, &prepared, "in-place repair: journal"));
  in_place_repairs++;
  in_place_upkeep_bytes_written += bytes;
  return Status::OK();
}

Status Collection::Impl::CompactOne(double slack, double sparse_fill, bool* compacted) {
  *compacted = false;
  std::shared_ptr<const CollectionState> st;
  {
    std::lock_guard<std::mutex> lock(write_mu);
    if (merging || !state || !state->version || !state->version->in_place()) return Status::OK();
    st = state;
  }
  InPlaceGraph& graph = *st->version->graph();
  PreparedInPlaceInsert prepared;  // holds the graph's writer lock until Commit
  STRATA_RETURN_IF_ERROR(graph.PrepareCompaction(&prepared, slack, sparse_fill));
  if (prepared.moves.empty()) {
    graph.Commit(&prepared);
    return Status::OK();
  }
  *compacted = true;
  const std::uint64_t bytes = prepared.report.bytes_written;
  STRATA_RETURN_IF_ERROR(JournalAndCommitMoves(*st, &prepared, "in-place compaction: journal"));
  in_place_compactions++;
  in_place_upkeep_bytes_written += bytes;
  return Status::OK();
}

Status Collection::Impl::JournalAndCommitMoves(const CollectionState& st,
                                               PreparedInPlaceInsert* prepared, const char* what) {
  InPlaceGraph& graph = *st.version->graph();
  if (group_commit) STRATA_RETURN_IF_ERROR(graph.Sync());
  std::lock_guard<std::mutex> lock(write_mu);
  if (state->version != st.version) return Status::OK();  // rebuilt meanwhile
  rocksdb::WriteBatch batch;
  collection::JournalMoves(st.version->number(), ++journal_seq, prepared->moves, &batch);
  rocksdb::WriteOptions wo = write_options;
  wo.sync = group_commit;
  STRATA_RETURN_IF_ERROR(FromRocks(db->Write(wo, &batch), what));
  graph.Commit(prepared);
  return Status::OK();
}

void Collection::Impl::ApplierLoop() {
  // Seeks run on every applier thread at once; the graph takes their
  // structural updates one at a time. The applier yields to searches as
  // merges do (a buffered collection's writes reach its index at the same
  // priority).
  YieldToSearches();
  std::unique_lock<std::mutex> lock(bg_mu);
  while (!stopping) {
    applier_cv.wait_for(lock, std::chrono::milliseconds(20));
    if (stopping) break;
    lock.unlock();
    // Writes first; every fourth step (or when none is pending) a deleted
    // row's repair, so repairs neither starve nor hold writes back.
    // Compaction runs to kIdleCompactionSlack once writes have paused
    // (in_place_compaction_pause_ms); while they stream in, only every sixteenth step
    // and once the pages are twice the fewest (synth1m 500k + 100k:
    // compacting to a quarter beside the writes moved more lists than the
    // inserts did and took half the insert rate for a tenth fewer pages a
    // query).
    std::uint64_t steps = 0;
    while (true) {
      bool applied = false, held_back = false, repaired = false, compacted = false;
      ++steps;
      Status st = ApplyOne(&applied, &held_back);
      if (st.ok() && (!applied || steps % 4 == 0)) st = RepairOne(&repaired);
      const std::int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
      if (applied || held_back || repaired) last_write_work.store(now, std::memory_order_relaxed);
      // Idle: no write pending (one held back for a rotation still is) ...
      const bool idle = !applied && !held_back;
      // ... and none for a while: not a gap between a stream's batches.
      const std::chrono::steady_clock::duration since(
          now - last_write_work.load(std::memory_order_relaxed));
      const bool paused =
          idle && since >= std::chrono::milliseconds(options.in_place_compaction_pause_ms);
      if (st.ok() && options.in_place_compaction && (idle || steps % 16 == 2)) {
        st = paused ? CompactOne(kIdleCompactionSlack, kIdleSparseFill, &compacted)
                    : CompactOne(kBusyCompactionSlack, kBusySparseFill, &compacted);
      }
      applied = applied || repaired || compacted;
      if (!st.ok()) {
        {
          std::lock_guard<std::mutex> wl(write_mu);
          last_apply_error = st;
        }
        // Back off: the entry stays pending (searchable) and is retried.
        std::unique_lock<std::mutex> wait(bg_mu);
        applier_cv.wait_for(wait, std::chrono::seconds(1), [this] { return stopping; });
        break;
      }
      if (!applied) break;
      std::lock_guard<std::mutex> stop_check(bg_mu);
      if (stopping) break;
    }
    lock.lock();
  }
}

}  // namespace strata
