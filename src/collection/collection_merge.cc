// Merges: the live set at a snapshot is written as a new immutable index
// version beside the current one while searches and writes go on; the
// switch (version pointer, merged pending keys, consumed tombstones) is one
// RocksDB write batch, after which searches move to the new version and the
// old one is removed when its last search ends.
//
// While at most half of the current version is dead, a merge updates the
// old index instead of rebuilding it (the `streaming` path, counted in
// streaming_merges): for the graph, FreshDiskANN's StreamingMerge (Singh et
// al.: delete, insert and patch phases over the existing graph;
// index/graph_index_merge.h); for IVF, the new vectors joined to their
// nearest existing centroid, only the changed clusters rewritten with the old
// RaBitQ quantizer, oversize clusters split (index/ivf_index_merge.h), the
// old rows' vectors read from the snapshot's 'v' records where a rewritten
// cluster's order or a split needs them. Otherwise (the first build, more
// than half dead, streaming_merge off) the index is rebuilt from the
// snapshot's live vectors.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>

#include "base/timer.h"
#include "collection/collection_impl.h"
#include "collection/store_keys.h"
#include "index/graph_index_merge.h"
#include "index/ivf_index_merge.h"

namespace strata {
namespace fs = std::filesystem;
using collection::IndexVersion;
using collection::PendingSet;

namespace {

// PQ and IVF training need this many rows.
constexpr std::uint64_t kMinIndexVectors = 256;

// What the SSD index stores of a collection's element type: bfloat16 rows
// (kept as such in the collection's records) go into float32 index files,
// which the index formats read; every other type is stored as it is.
ElementType IndexElementType(ElementType stored) {
  return stored == ElementType::kBFloat16 ? ElementType::kFloat32 : stored;
}

std::string BaseFileName(ElementType type) {
  switch (IndexElementType(type)) {
    case ElementType::kUint8:
      return "base.u8bin";
    case ElementType::kInt8:
      return "base.i8bin";
    case ElementType::kFloat16:
      return "base.npy";
    default:
      return "base.fbin";
  }
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("fsync " + dir, errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  return rc == 0 ? Status::OK() : Status::FromErrno("fsync " + dir, err);
}

// A live record kept in RAM when a merge returns the collection to the
// flat phase.
struct FlatRow {
  VectorId id;
  std::uint64_t seq;
  std::vector<float> vector;
};

// Writes the live records of `snapshot` into `path` and their ids in order;
// with `rows`, keeps them in RAM instead (a few, for the flat phase).
Status WriteSnapshotBase(const Collection::Impl& m, const rocksdb::Snapshot* snapshot,
                         const std::string& path, std::vector<VectorId>* ids,
                         std::vector<FlatRow>* rows = nullptr) {
  DatasetWriteOptions wo;
  wo.sync = false;  // scratch input of the build, removed after it
  STRATA_ASSIGN_OR_RETURN(auto writer,
                          DatasetWriter::Create(path, IndexElementType(m.stored.element_type),
                                                m.stored.dim, wo));
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(m.db->NewIterator(ro));
  const std::string prefix(1, collection::kVectorPrefix);
  std::vector<float> row(m.stored.dim);
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    STRATA_ASSIGN_OR_RETURN(VectorId id, collection::ParseIdKey(it->key().ToStringView(), prefix[0]));
    STRATA_ASSIGN_OR_RETURN(auto rec,
                            collection::DecodeRecord(it->value().ToStringView(), m.vector_bytes));
    m.LoadFloat(reinterpret_cast<const std::byte*>(rec.vector.data()), row.data());
    if (rows != nullptr) {
      rows->push_back(FlatRow{id, rec.seq, row});
    } else {
      STRATA_RETURN_IF_ERROR(writer->AppendFloat(row));
    }
    ids->push_back(id);
  }
  STRATA_RETURN_IF_ERROR(FromRocks(it->status(), "merge: reading the snapshot"));
  if (ids->empty() || rows != nullptr) return Status::OK();
  return writer->Finish();
}

// The vectors (as stored, widened to float) of `rows` of the version `old`,
// from their 'v' records at `snapshot`: a row live at the snapshot holds its
// id's record there (a later upsert would have tombstoned it).
Status ReadSnapshotRows(const Collection::Impl& m, const rocksdb::Snapshot* snapshot,
                        const IndexVersion& old, std::span<const std::uint64_t> rows, float* out) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  ro.fill_cache = false;
  constexpr std::size_t kBatch = 4096;  // bounds the keys and values held at once
  std::vector<std::string> keys, values;
  std::vector<rocksdb::Slice> slices;
  for (std::size_t b = 0; b < rows.size(); b += kBatch) {
    const std::size_t e = std::min(rows.size(), b + kBatch);
    keys.clear();
    slices.clear();
    for (std::size_t i = b; i < e; ++i) {
      keys.push_back(collection::IdKey(collection::kVectorPrefix, old.user_id(rows[i])));
    }
    for (const std::string& k : keys) slices.emplace_back(k);
    const std::vector<rocksdb::Status> st = m.db->MultiGet(ro, slices, &values);
    for (std::size_t i = b; i < e; ++i) {
      const std::string what = "merge: vector of id " + std::to_string(old.user_id(rows[i]));
      if (st[i - b].IsNotFound()) return Status::Corruption(what + " is missing");
      STRATA_RETURN_IF_ERROR(FromRocks(st[i - b], what));
      STRATA_ASSIGN_OR_RETURN(auto rec, collection::DecodeRecord(values[i - b], m.vector_bytes));
      m.LoadFloat(reinterpret_cast<const std::byte*>(rec.vector.data()), out + i * m.stored.dim);
    }
  }
  return Status::OK();
}

}  // namespace

Status Collection::Impl::RunMerge(unsigned threads, bool first_only) {
  std::lock_guard<std::mutex> merge_lock(merge_mu);
  const std::stop_token stop = merge_stop.get_token();
  if (stop.stop_requested()) return Status::Aborted("merge: merges are stopped");
  Timer timer;
  std::uint64_t snap_seq = 0;
  std::uint64_t next_version = 0;
  const rocksdb::Snapshot* db_snapshot = nullptr;
  const bool first = !current().version;
  // What the merge starts from, captured at the snapshot: the state (kept
  // alive for the whole merge), the old version's rows dead at the snapshot
  // and the pending entries live at it.
  std::shared_ptr<const CollectionState> base_state;
  std::vector<std::uint8_t> dead_rows;
  std::vector<std::uint32_t> pending_live;
  bool streaming = false;
  bool flat_back = false;
  // Label-aware graphs read their labels from it (replaced under write_mu).
  std::shared_ptr<const filter::PayloadIndex> label_index;
  {
    std::lock_guard<std::mutex> lock(write_mu);
    label_index = payload_index;
    const CollectionState& cur = current();
    const bool dead = cur.version && cur.version->dead_count() > 0;
    if (pending_pos.empty() && !dead) return Status::OK();
    if (first_only && cur.version) return Status::OK();
    // Too few vectors to train codes on: stay an exact scan (which is then
    // also the fastest search).
    if (!cur.version && live < kMinIndexVectors) return Status::OK();
    // Deleted down to fewer: back to the flat phase (an exact scan), as a
    // clean collection of that size would be.
    flat_back = cur.version && live < kMinIndexVectors;
    snap_seq = last_seq;
    next_version = (cur.version ? cur.version->number() : 0) + 1;
    base_state = state;
    // StreamingMerge pays off while most of the graph survives (at half
    // deleted it costs about a rebuild: graph/streaming_merge.h notes); the
    // IVF merge keeps the old centroids, which drift from a half-deleted set.
    // An in-place version's node file is stale (its graph lives in the
    // decoupled layout): merges rebuild.
    streaming = !flat_back && options.streaming_merge && !in_place() &&
                (stored.index_type == "graph" || stored.index_type == "ivf") && cur.version &&
                cur.version->dead_count() * 2 <= cur.version->size();
    if (streaming) {
      const IndexVersion& v = *cur.version;
      dead_rows.resize(v.size());
      for (std::uint64_t r = 0; r < v.size(); ++r) dead_rows[r] = v.LiveAt(r, snap_seq) ? 0 : 1;
      const PendingSet& p = *cur.pending;
      for (std::uint32_t pos = 0; pos < p.size(); ++pos) {
        if (p.insert_seq(pos) <= snap_seq && p.dead_seq(pos) > snap_seq) pending_live.push_back(pos);
      }
    }
    // The rebuild reads every live vector at the snapshot; the IVF merge
    // reads some old rows' (ReadSnapshotRows).
    if (!streaming || stored.index_type == "ivf") db_snapshot = db->GetSnapshot();
    merging = true;
  }
  // Version numbers only grow: after a version-less state (everything
  // deleted) the pointer still counts.
  {
    std::string text;
    if (db->Get(rocksdb::ReadOptions(), collection::MetaKey("version"), &text).ok()) {
      nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
      if (!j.is_discarded() && j.contains("version")) {
        next_version = std::max<std::uint64_t>(next_version, j["version"].get<std::uint64_t>() + 1);
        next_version = std::max<std::uint64_t>(
            next_version, j.value("max_version", std::uint64_t{0}) + 1);
      }
    }
  }
  const std::string vdir = VersionDir(next_version);
  const std::string base = IndexRoot() + "/" + BaseFileName(stored.element_type);
  auto fail = [&](Status st) {
    std::error_code ec;
    fs::remove_all(vdir, ec);
    fs::remove(base, ec);
    std::lock_guard<std::mutex> lock(write_mu);
    merging = false;
    last_merge_error = st;
    merge_done_cv.notify_all();
    return st;
  };

  // ---- build the new version from the snapshot (no lock held) ----
  std::vector<VectorId> ids;
  std::vector<FlatRow> flat_rows;
  std::shared_ptr<IndexVersion> next;
  if (streaming) {
    const IndexVersion& old = *base_state->version;
    const PendingSet& p = *base_state->pending;
    for (std::uint64_t r = 0; r < old.size(); ++r) {
      if (!dead_rows[r]) ids.push_back(old.user_id(r));
    }
    std::vector<float> new_rows(pending_live.size() * stored.dim);
    for (std::size_t i = 0; i < pending_live.size(); ++i) {
      std::copy_n(p.vector(pending_live[i]), stored.dim, new_rows.data() + i * stored.dim);
      ids.push_back(p.id(pending_live[i]));
    }
    if (!ids.empty()) {
      std::error_code ec;
      fs::remove_all(vdir, ec);
      Status merged;
      if (stored.index_type == "ivf") {
        IvfBuildOptions o = stored.ivf;
        o.threads = threads;
        o.stop = stop;
        auto r = MergeIvfIndex(old.dir(), dead_rows, new_rows, vdir, o, nullptr,
                               [&](std::span<const std::uint64_t> rows, float* out) {
                                 return ReadSnapshotRows(*this, db_snapshot, old, rows, out);
                               });
        merged = r.status();
      } else {
        GraphBuildOptions o = stored.graph;
        o.threads = threads;
        o.stop = stop;
        std::optional<LabelSets> labels;
        if (!stored.graph_label_field.empty()) {
          auto made = GraphLabels(*label_index, ids);
          if (made.ok()) {
            labels = std::move(*made);
            o.labels = &*labels;
          }
          merged = made.status();
        }
        if (merged.ok()) merged = MergeGraphIndex(old.dir(), dead_rows, new_rows, vdir, o).status();
      }
      if (db_snapshot) {  // the IVF merge's reads are done
        db->ReleaseSnapshot(db_snapshot);
        db_snapshot = nullptr;
      }
      if (!merged.ok()) return fail(merged);
      Status st = collection::WriteSlotsFile(vdir, ids);
      if (st.ok()) st = SyncDirectory(IndexRoot());
      if (!st.ok()) return fail(st);
      auto loaded = LoadVersion(next_version, vdir);
      if (!loaded.ok()) return fail(loaded.status());
      next = std::move(*loaded);
    }
    ids.clear();  // handled
  }
  if (streaming) {
    if (db_snapshot) db->ReleaseSnapshot(db_snapshot);  // nothing was merged
  } else {
    std::error_code ec;
    fs::remove_all(vdir, ec);
    Status st = WriteSnapshotBase(*this, db_snapshot, base, &ids, flat_back ? &flat_rows : nullptr);
    db->ReleaseSnapshot(db_snapshot);
    if (!st.ok()) return fail(st);
  }
  if (flat_back) ids.clear();
  if (!ids.empty()) {
    Status st;
    if (stored.index_type == "ivf") {
      IvfBuildOptions o = stored.ivf;
      o.threads = threads;
      o.stop = stop;
      auto r = BuildIvfIndex(base, vdir, o);
      st = r.status();
    } else {
      GraphBuildOptions o = stored.graph;
      o.threads = threads;
      o.stop = stop;
      std::optional<LabelSets> labels;
      if (!stored.graph_label_field.empty()) {
        auto made = GraphLabels(*label_index, ids);
        if (!made.ok()) return fail(made.status());
        labels = std::move(*made);
        o.labels = &*labels;
      }
      // DefraDB's DISKANN: train once on a sample of at most train_sample_bytes.
      o.pq_train_rows = std::max<std::uint64_t>(
          1, std::min<std::uint64_t>(ids.size(),
                                     options.train_sample_bytes / (stored.dim * sizeof(float))));
      auto r = BuildGraphIndex(base, vdir, o);
      st = r.status();
    }
    std::error_code ec;
    fs::remove(base, ec);
    if (!st.ok()) return fail(st);
    st = collection::WriteSlotsFile(vdir, ids);
    if (st.ok()) st = SyncDirectory(IndexRoot());
    if (!st.ok()) return fail(st);
    auto loaded = LoadVersion(next_version, vdir);
    if (!loaded.ok()) return fail(loaded.status());
    next = std::move(*loaded);
  } else {
    std::error_code ec;
    fs::remove(base, ec);
  }

  // ---- switch (writes wait here, searches do not) ----
  std::unique_lock<std::mutex> lock(write_mu);
  const CollectionState& cur = current();
  auto state = std::make_shared<CollectionState>();
  state->version = next;
  if (Status made = MakePending(stored.dim, stored.metric, state.get()); !made.ok()) {
    lock.unlock();
    return fail(made);
  }
  std::unordered_map<VectorId, std::uint32_t> next_pos;
  rocksdb::WriteBatch batch;
  for (const auto& [id, pos] : pending_pos) {
    if (cur.pending->insert_seq(pos) <= snap_seq) {
      batch.Delete(collection::IdKey(collection::kPendingPrefix, id));
    }
  }
  // Back to the flat phase: the live rows of the snapshot become pending
  // again (RAM and their 'p' keys).
  std::unordered_map<VectorId, std::uint32_t> flat_pos;
  for (const FlatRow& r : flat_rows) {
    auto appended = state->pending->Append(r.id, r.vector.data(), r.seq);
    if (!appended.ok()) {
      lock.unlock();
      return fail(appended.status());
    }
    flat_pos[r.id] = *appended;
    next_pos[r.id] = *appended;
  }
  // Carry the writes made during the build, in their order.
  const std::uint32_t n = cur.pending->size();
  for (std::uint32_t pos = 0; pos < n; ++pos) {
    if (cur.pending->insert_seq(pos) <= snap_seq) continue;
    if (cur.pending->dead_seq(pos) != collection::kNeverDead) continue;
    auto appended = state->pending->Append(cur.pending->id(pos), cur.pending->vector(pos),
                                           cur.pending->insert_seq(pos));
    if (!appended.ok()) {
      lock.unlock();
      return fail(appended.status());
    }
    next_pos[cur.pending->id(pos)] = *appended;
  }
  std::vector<VectorId> consumed;
  for (const auto& [id, ts] : tombstones) {
    if (ts <= snap_seq) {
      consumed.push_back(id);
      batch.Delete(collection::IdKey(collection::kTombstonePrefix, id));
    } else if (next) {
      // Written during the build: the new version's copy is stale too.
      if (auto slot = next->SlotOf(id)) next->MarkDead(*slot, 0);
    } else if (auto f = flat_pos.find(id); f != flat_pos.end()) {
      // ... or the flat copy: replaced (a newer entry was carried) or deleted.
      state->pending->MarkDead(f->second, 0);
      if (next_pos[id] == f->second) next_pos.erase(id);
      flat_pos.erase(f);
    }
  }
  for (const auto& [id, pos] : flat_pos) {
    batch.Put(collection::IdKey(collection::kPendingPrefix, id),
              collection::EncodeU64(state->pending->insert_seq(pos)));
  }
  // max_version: numbers are never reused, even after a version-less state,
  // so an old version's directory (removed when its last search ends) is
  // never the new one's.
  nlohmann::json pointer = {
      {"version", next ? next_version : 0}, {"seq", snap_seq}, {"max_version", next_version}};
  batch.Put(collection::MetaKey("version"), pointer.dump());
  if (cur.version && cur.version->in_place()) collection::DropJournal(cur.version->number(), &batch);
  rocksdb::WriteOptions sync;
  sync.sync = true;
  Status st = FromRocks(db->Write(sync, &batch), "merge: switching versions");
  if (!st.ok()) {
    if (next) next->MarkObsolete();
    merging = false;
    last_merge_error = st;
    merge_done_cv.notify_all();
    return st;
  }
  for (VectorId id : consumed) tombstones.erase(id);
  if (cur.version) cur.version->MarkObsolete();
  pending_pos = std::move(next_pos);
  pending_applied = 0;
  pending_claimed = 0;
  applying.clear();  // claims on the old set end without effect
  version_seq = snap_seq;
  Publish(std::move(state), last_seq);
  // The switch's synced write synced the whole log: every earlier write too.
  MarkDurable(last_seq);
  merging = false;
  last_merge_error = Status::OK();
  merges_done++;
  if (streaming) streaming_merges++;
  last_merge_seconds = timer.ElapsedSeconds();
  if (first) first_build_seconds = last_merge_seconds.load();
  merge_done_cv.notify_all();
  WakeApplier();
  return Status::OK();
}

void Collection::Impl::MergeLoop() {
  // Merges yield to searches: a lower priority for this thread (and the
  // build threads it starts, which inherit it and its CPUs), off the CPUs
  // that take the disk's interrupts.
  YieldToSearches();
  std::unique_lock<std::mutex> lock(bg_mu);
  while (true) {
    bg_cv.wait(lock, [this] { return stopping || merges_stopped || merge_wanted; });
    if (stopping || merges_stopped) break;
    merge_wanted = false;
    const std::uint64_t serving = merge_requests;  // Merge() calls this merge answers
    lock.unlock();
    Status st = RunMerge(options.merge_threads);
    {
      std::lock_guard<std::mutex> served(bg_mu);
      if (serving > merge_requests_served) {
        merge_requests_served = serving;
        merge_request_status = st;
      }
    }
    bg_cv.notify_all();
    if (!st.ok()) {
      // Back off, then retry; the error stays visible to WaitForMerge.
      lock.lock();
      bg_cv.wait_for(lock, std::chrono::seconds(1), [this] { return stopping || merges_stopped; });
      merge_wanted = true;
      continue;
    }
    // Writes during the merge asked for another one (the entries being
    // merged still counted as pending then): whether one is due is decided
    // now, against what is pending after the switch. Without this, every
    // merge was followed by one of the few writes made during it (at 1M, 12
    // of 38 live-build merges, 3-10 s each for ~1,000 vectors). write_mu
    // first (a writer requests under it), so no request made after this
    // check is lost.
    std::lock_guard<std::mutex> wl(write_mu);
    lock.lock();
    merge_wanted = MergeDue() || merge_requests > merge_requests_served;
  }
}

Status Collection::Merge() {
  Impl& m = *impl_;
  if (!m.options.background_merge) return m.RunMerge(m.options.merge_threads);
  // Handed to the merge thread, so that it runs as every background merge
  // does (merge_threads cores at nice 10, off the CPUs that take the disk's
  // interrupts: searches keep their share of the cores and their reads'
  // latency), and waited for: served by a merge that starts after this
  // request.
  std::unique_lock<std::mutex> lock(m.bg_mu);
  const std::uint64_t mine = ++m.merge_requests;
  m.merge_wanted = true;
  m.bg_cv.notify_all();
  m.bg_cv.wait(lock, [&] {
    return m.merge_requests_served >= mine || m.stopping || m.merges_stopped;
  });
  if (m.merge_requests_served < mine) {
    return Status::Aborted(m.merges_stopped ? "merge: merges are stopped"
                                            : "merge: the collection is closing");
  }
  return m.merge_request_status;
}

void Collection::StopMerges() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.bg_mu);
    m.merges_stopped = true;
  }
  m.merge_stop.request_stop();
  m.bg_cv.notify_all();
  // Writers waiting for a merge to drain the memory budget (they check the
  // token under write_mu before they wait).
  std::lock_guard<std::mutex> lock(m.write_mu);
  m.merge_done_cv.notify_all();
}

Status Collection::WaitForMerge() {
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.merge_mu);  // a running merge holds it
  }
  bool wanted = false;
  {
    std::lock_guard<std::mutex> lock(m.bg_mu);
    wanted = m.merge_wanted;
  }
  if (wanted) {
    // A requested merge not yet started: run it here.
    STRATA_RETURN_IF_ERROR(m.RunMerge(m.options.merge_threads));
  }
  std::lock_guard<std::mutex> lock(m.write_mu);
  return m.last_merge_error;
}

}  // namespace strata
