// Collection::Open (creation, option checks, the directory lock, recovery of
// the current version, the tombstones and the pending list), Close, Stats,
// and the log-sync thread.
#include <fcntl.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/options_util.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/thread_affinity.h"
#include "base/timer.h"
#include "collection/collection_impl.h"
#include "collection/store_keys.h"
#include "io/interrupt_cpus.h"

namespace strata {
namespace fs = std::filesystem;
using collection::IndexVersion;
using collection::PendingSet;

namespace {

constexpr char kLockFile[] = "LOCK";
constexpr char kDbDir[] = "db";

Status LockDirectory(const std::string& dir, int* fd_out) {
  const std::string path = dir + "/" + kLockFile;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno("collection: cannot open " + path, errno);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::Busy("collection " + dir +
                          " is open in another process (one writer process per directory)");
    }
    return Status::FromErrno("collection: cannot lock " + path, err);
  }
  *fd_out = fd;
  return Status::OK();
}

// Compares a creation option given at open with the stored one.
template <typename T, typename Name>
Status CheckSame(const char* what, const std::optional<T>& given, const T& stored, Name name) {
  if (given && *given != stored) {
    return Status::InvalidArgument(std::string("collection was created with ") + what + " " +
                                   std::string(name(stored)) + ", opened with " +
                                   std::string(name(*given)));
  }
  return Status::OK();
}

Status ParseVersionPointer(const std::string& text, std::uint64_t* version, std::uint64_t* seq) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.contains("version") || !j.contains("seq")) {
    return Status::Corruption("collection: bad version pointer '" + text + "'");
  }
  *version = j["version"].get<std::uint64_t>();
  *seq = j["seq"].get<std::uint64_t>();
  return Status::OK();
}

// The CPUs for the background threads: the ones asked for (those of them
// this process may use), or else every usable CPU but the ones that take the
// interrupts of the disk under `dir` (none restricted when that is all of
// them, or when the disk's interrupts cannot be told).
Status ChooseBackgroundCpus(const std::string& dir, const CollectionOptions& options,
                            std::vector<unsigned>* out) {
  const std::vector<unsigned> usable = CurrentThreadCpus();
  out->clear();
  if (!options.background_cpus.empty()) {
    for (unsigned cpu : options.background_cpus) {
      if (std::find(usable.begin(), usable.end(), cpu) != usable.end()) out->push_back(cpu);
    }
    if (out->empty()) {
      return Status::InvalidArgument(
          "background_cpus: none of the given CPUs is available to this process");
    }
    std::sort(out->begin(), out->end());
    out->erase(std::unique(out->begin(), out->end()), out->end());
    return Status::OK();
  }
  *out = CpusAvoiding(usable, io::DeviceInterruptCpus(dir));
  if (out->size() == usable.size()) out->clear();  // nothing avoided
  return Status::OK();
}

}  // namespace

std::string Collection::Impl::VersionDir(std::uint64_t v) const {
  char name[32];
  std::snprintf(name, sizeof(name), "v%06llu", static_cast<unsigned long long>(v));
  return IndexRoot() + "/" + name;
}

bool IsCollectionDirectory(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(dir + "/" + kDbDir, ec) && fs::exists(dir + "/" + kLockFile, ec);
}

Result<std::string> DescribeCollectionDirectory(const std::string& dir) {
  std::error_code ec;
  if (IsCollectionDirectory(dir)) return std::string("collection");
  if (fs::exists(dir + "/manifest.json", ec)) return std::string("index");
  return Status::NotFound(dir + " holds neither a collection nor an index");
}

Collection::Collection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Collection::~Collection() { (void)Close(); }

Collection::Impl::~Impl() {
  if (lock_fd >= 0) ::close(lock_fd);
}

Result<std::unique_ptr<Collection>> Collection::Open(const std::string& dir,
                                                     const CollectionOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  std::error_code ec;
  const bool existed = fs::exists(dir + "/" + kDbDir, ec);
  if (!existed) {
    if (!options.create_if_missing) return Status::NotFound("no collection in " + dir);
    if (options.dim == 0) {
      return Status::InvalidArgument("creating a collection needs dim (> 0)");
    }
    fs::create_directories(dir, ec);
    if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  } else if (options.error_if_exists) {
    return Status::InvalidArgument("a collection already exists in " + dir);
  }
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->options = options;
  STRATA_RETURN_IF_ERROR(LockDirectory(dir, &impl->lock_fd));

  rocksdb::Options ro;
  ro.create_if_missing = !existed;
  ro.paranoid_checks = true;
  ro.max_background_jobs = 2;
  ro.keep_log_file_num = 4;
  ro.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  rocksdb::DB* raw = nullptr;
  STRATA_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(ro, dir + "/" + kDbDir, &raw),
                                   "collection: opening " + dir + "/" + kDbDir));
  impl->db.reset(raw);
  impl->write_options.sync = false;
  impl->group_commit = options.durability == Durability::kSync;

  // ---- creation options ----
  std::string text;
  rocksdb::Status s = impl->db->Get(rocksdb::ReadOptions(), collection::MetaKey("options"), &text);
  StoredCollectionOptions& st = impl->stored;
  if (s.IsNotFound()) {
    if (options.dim == 0) return Status::InvalidArgument("creating a collection needs dim (> 0)");
    if (!options.graph_label_field.empty() &&
        std::none_of(options.payload_index.begin(), options.payload_index.end(),
                     [&](const PayloadFieldSpec& f) {
                       return f.path == options.graph_label_field &&
                              (f.type == PayloadFieldType::kInteger ||
                               f.type == PayloadFieldType::kKeyword);
                     })) {
      return Status::InvalidArgument("graph_label_field '" + options.graph_label_field +
                                     "' must be declared in payload_index as integer or keyword");
    }
    st.dim = options.dim;
    st.metric = options.metric.value_or(Metric::kL2);
    st.element_type = options.element_type.value_or(ElementType::kFloat32);
    st.index_type = options.index_type.value_or("graph");
    st.graph_label_field = options.graph_label_field;
    st.update_mode = options.update_mode.value_or(UpdateMode::kBuffered);
    if (st.update_mode == UpdateMode::kInPlace) {
      if (st.index_type != "graph") {
        return Status::InvalidArgument("update_mode in_place needs a graph index");
      }
      if (!st.graph_label_field.empty()) {
        return Status::InvalidArgument(
            "update_mode in_place does not build label-aware graphs (graph_label_field)");
      }
      if (options.graph.all_in_storage) {
        return Status::InvalidArgument(
            "update_mode in_place walks on the PQ codes in RAM (not all_in_storage)");
      }
    }
    st.graph = options.graph;
    st.ivf = options.ivf;
    st.graph.metric = st.ivf.metric = st.metric;
    rocksdb::WriteBatch batch;
    batch.Put(collection::MetaKey("options"), StoredOptionsToJson(st));
    batch.Put(collection::MetaKey("seq"), collection::EncodeU64(0));
    rocksdb::WriteOptions sync;
    sync.sync = true;
    STRATA_RETURN_IF_ERROR(FromRocks(impl->db->Write(sync, &batch), "collection: create"));
  } else {
    STRATA_RETURN_IF_ERROR(FromRocks(s, "collection: reading options"));
    STRATA_ASSIGN_OR_RETURN(st, StoredOptionsFromJson(text));
    if (options.dim != 0 && options.dim != st.dim) {
      return Status::InvalidArgument("collection was created with dim " + std::to_string(st.dim) +
                                     ", opened with dim " + std::to_string(options.dim));
    }
    STRATA_RETURN_IF_ERROR(CheckSame("metric", options.metric, st.metric, MetricName));
    STRATA_RETURN_IF_ERROR(
        CheckSame("element type", options.element_type, st.element_type, ElementTypeName));
    STRATA_RETURN_IF_ERROR(CheckSame("index type", options.index_type, st.index_type,
                                     [](const std::string& x) { return x; }));
    STRATA_RETURN_IF_ERROR(CheckSame("update mode", options.update_mode, st.update_mode,
                                     [](UpdateMode m) { return std::string(UpdateModeName(m)); }));
    if (!options.graph_label_field.empty() && options.graph_label_field != st.graph_label_field) {
      return Status::InvalidArgument("collection was created with graph_label_field '" +
                                     st.graph_label_field + "', opened with '" +
                                     options.graph_label_field + "'");
    }
  }
  impl->vector_bytes = static_cast<std::size_t>(st.dim) * ElementSize(st.element_type);

  // ---- last sequence and the current version ----
  STRATA_RETURN_IF_ERROR(FromRocks(
      impl->db->Get(rocksdb::ReadOptions(), collection::MetaKey("seq"), &text), "collection: seq"));
  STRATA_ASSIGN_OR_RETURN(impl->last_seq, collection::DecodeU64(text));
  auto state = std::make_shared<CollectionState>();
  std::uint64_t version_number = 0;
  s = impl->db->Get(rocksdb::ReadOptions(), collection::MetaKey("version"), &text);
  if (s.ok()) {
    STRATA_RETURN_IF_ERROR(ParseVersionPointer(text, &version_number, &impl->version_seq));
  } else if (!s.IsNotFound()) {
    return FromRocks(s, "collection: version pointer");
  }
  // Whatever is not the current version is a merge a crash interrupted, or an
  // old version whose removal it interrupted.
  fs::create_directories(impl->IndexRoot(), ec);
  const std::string current_dir = version_number ? impl->VersionDir(version_number) : "";
  for (const auto& entry : fs::directory_iterator(impl->IndexRoot(), ec)) {
    if (entry.path().string() != current_dir) fs::remove_all(entry.path(), ec);
  }
  // The node cache gets at most half the memory budget, in this version and
  // in every one a merge loads.
  impl->index_open = options.open;
  if (options.memory_budget_bytes > 0) {
    impl->index_open.cache_mib =
        std::min<std::uint64_t>(impl->index_open.cache_mib, options.memory_budget_bytes / 2 >> 20);
  }
  if (version_number != 0) {
    std::optional<collection::LoadedJournal> journal;
    if (impl->in_place()) {
      STRATA_ASSIGN_OR_RETURN(journal, collection::LoadJournal(impl->db.get(), version_number));
      impl->journal_seq = journal->max_seq;
    }
    STRATA_ASSIGN_OR_RETURN(state->version, impl->LoadVersion(version_number, current_dir,
                                                              journal ? &*journal : nullptr));
    if (journal && !journal->stale_versions.empty()) {
      // Journals of versions a crash kept the switch from removing.
      rocksdb::WriteBatch batch;
      for (std::uint64_t v : journal->stale_versions) collection::DropJournal(v, &batch);
      STRATA_RETURN_IF_ERROR(
          FromRocks(impl->db->Write(rocksdb::WriteOptions(), &batch), "collection: journal"));
    }
  }
  STRATA_RETURN_IF_ERROR(MakePending(st.dim, st.metric, state.get()));

  // ---- tombstones ----
  {
    std::unique_ptr<rocksdb::Iterator> it(impl->db->NewIterator(rocksdb::ReadOptions()));
    const std::string prefix(1, collection::kTombstonePrefix);
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      STRATA_ASSIGN_OR_RETURN(VectorId id,
                              collection::ParseIdKey(it->key().ToStringView(), prefix[0]));
      STRATA_ASSIGN_OR_RETURN(std::uint64_t seq, collection::DecodeU64(it->value().ToStringView()));
      impl->tombstones[id] = seq;
      if (state->version) {
        // An in-place version's newest row of the id was born at the write
        // that made the tombstone when that write replaced an older copy:
        // it is dead only if a later write killed it.
        auto slot = state->version->SlotOf(id);
        if (slot && state->version->born(*slot) < seq) state->version->MarkDead(*slot, 0);
      }
    }
    STRATA_RETURN_IF_ERROR(FromRocks(it->status(), "collection: reading tombstones"));
  }
  // ---- the pending list ----
  {
    std::unique_ptr<rocksdb::Iterator> it(impl->db->NewIterator(rocksdb::ReadOptions()));
    const std::string prefix(1, collection::kPendingPrefix);
    std::vector<float> row(st.dim);
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      STRATA_ASSIGN_OR_RETURN(VectorId id,
                              collection::ParseIdKey(it->key().ToStringView(), prefix[0]));
      STRATA_ASSIGN_OR_RETURN(std::uint64_t seq, collection::DecodeU64(it->value().ToStringView()));
      std::string value;
      STRATA_RETURN_IF_ERROR(
          FromRocks(impl->db->Get(rocksdb::ReadOptions(),
                                  collection::IdKey(collection::kVectorPrefix, id), &value),
                    "collection: pending id " + std::to_string(id) + " has no record"));
      STRATA_ASSIGN_OR_RETURN(auto rec, collection::DecodeRecord(value, impl->vector_bytes));
      impl->LoadFloat(reinterpret_cast<const std::byte*>(rec.vector.data()), row.data());
      STRATA_ASSIGN_OR_RETURN(std::uint32_t pos, state->pending->Append(id, row.data(), seq));
      impl->pending_pos[id] = pos;
    }
    STRATA_RETURN_IF_ERROR(FromRocks(it->status(), "collection: reading the pending list"));
  }
  const std::uint64_t indexed_live =
      state->version ? state->version->size() - state->version->dead_count() : 0;
  impl->live = indexed_live + impl->pending_pos.size();
  // ---- payload indexes (rebuilt from the stored payloads) ----
  STRATA_RETURN_IF_ERROR(impl->OpenPayloadIndex(options.payload_index));
  if (!st.graph_label_field.empty() && impl->LabelFieldPosition(*impl->payload_index) < 0) {
    return Status::InvalidArgument("graph_label_field '" + st.graph_label_field +
                                   "' must be declared in payload_index as integer or keyword");
  }
  if (const int field = impl->LabelFieldPosition(*impl->payload_index); field >= 0) {
    impl->graph_label_keyword =
        impl->payload_index->fields()[static_cast<std::size_t>(field)].type ==
        PayloadFieldType::kKeyword;
    if (impl->graph_label_keyword) {
      STRATA_RETURN_IF_ERROR(impl->graph_keywords.Load(impl->db.get()));
    }
  }
  if (impl->group_commit) {
    // What the log held unsynced when the last process died is visible from
    // now on: make it durable first.
    STRATA_RETURN_IF_ERROR(FromRocks(impl->db->SyncWAL(), "collection: syncing the log"));
  }
  impl->Publish(std::move(state), impl->last_seq);
  impl->logged_seq = impl->last_seq;
  impl->durable_seq = impl->last_seq;  // recovered from the log

  STRATA_RETURN_IF_ERROR(ChooseBackgroundCpus(dir, options, &impl->background_cpus));
  Impl* p = impl.get();
  if (options.durability == Durability::kAsync) {
    p->sync_thread = std::thread([p] { p->SyncLoop(); });
  }
  if (options.background_merge) p->merge_thread = std::thread([p] { p->MergeLoop(); });
  p->indexer_thread = std::thread([p] { p->IndexerLoop(); });
  if (p->in_place()) {
    for (unsigned t = 0; t < options.in_place_threads; ++t) {
      p->applier_threads.emplace_back([p] { p->ApplierLoop(); });
    }
  }
  std::unique_ptr<Collection> c(new Collection(std::move(impl)));
  // A crash may have interrupted the first build, or left a merge due.
  if (!c->impl_->current().version && c->impl_->live >= options.flat_threshold) {
    STRATA_RETURN_IF_ERROR(p->RunMerge(0, /*first_only=*/true));
  } else {
    std::lock_guard<std::mutex> lock(p->write_mu);
    if (p->MergeDue()) p->RequestMerge();
  }
  return c;
}

void Collection::Impl::PlaceBackgroundThread() const {
  // Best effort: a thread left where it was only costs speed.
  if (!background_cpus.empty()) (void)SetCurrentThreadCpus(background_cpus);
}

void Collection::Impl::YieldToSearches() const {
  ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
  PlaceBackgroundThread();
}

Status MakePending(std::uint32_t dim, Metric metric, CollectionState* state) {
  STRATA_ASSIGN_OR_RETURN(auto pending, PendingSet::Create(dim, metric));
  state->pending = std::move(pending);
  STRATA_ASSIGN_OR_RETURN(auto graph,
                          collection::PendingGraph::Create(state->pending.get(), metric, {}));
  state->pending_graph = std::move(graph);
  return Status::OK();
}

void Collection::Impl::WakeIndexer() { indexer_cv.notify_one(); }

namespace {
constexpr std::uint32_t kInPlaceScanOnly = 8192;
}  // namespace

void Collection::Impl::IndexerLoop() {
  // Keeps the pending graph caught up with the pending set, in steps, so a
  // search scans exactly only the few entries written since the last step.
  constexpr std::uint32_t kStep = 256;
  PlaceBackgroundThread();
  std::unique_lock<std::mutex> lock(bg_mu);
  while (!stopping) {
    indexer_cv.wait_for(lock, std::chrono::milliseconds(20));
    if (stopping) break;
    lock.unlock();
    while (true) {
      const CollectionSnapshot snap = Snapshot();
      if (!snap.state) break;
      const std::uint32_t size = snap.state->pending->size();
      const std::uint32_t done = snap.state->pending_graph->indexed();
      if (size <= done) break;
      // In place, the applier keeps the pending set small (its applied
      // entries are dropped at kRotateApplied): a search scans a set this
      // small whole, and the graph would only take CPU from the applier.
      // Past it (an applier falling behind) the graph is built as usual.
      if (in_place() && size <= kInPlaceScanOnly) break;
      if (!snap.state->pending_graph->CatchUp(std::min(size, done + kStep)).ok()) break;
      std::lock_guard<std::mutex> stop_check(bg_mu);
      if (stopping) break;
    }
    lock.lock();
  }
}

void Collection::Impl::SyncLoop() {
  std::unique_lock<std::mutex> lock(bg_mu);
  while (!stopping) {
    bg_cv.wait_for(lock, std::chrono::milliseconds(options.sync_interval_ms),
                   [this] { return stopping; });
    if (stopping) break;
    lock.unlock();
    (void)db->SyncWAL();  // a failure shows at the next Flush/Close
    lock.lock();
  }
}

Status Collection::Close() {
  if (impl_ == nullptr || impl_->closed) return Status::OK();
  Impl& m = *impl_;
  {
    std::lock_guard<std::mutex> lock(m.bg_mu);
    m.stopping = true;
  }
  m.bg_cv.notify_all();
  m.indexer_cv.notify_all();
  m.applier_cv.notify_all();
  for (std::thread& t : m.applier_threads) t.join();
  m.applier_threads.clear();
  if (m.merge_thread.joinable()) m.merge_thread.join();
  if (m.sync_thread.joinable()) m.sync_thread.join();
  if (m.indexer_thread.joinable()) m.indexer_thread.join();
  Status st = FromRocks(m.db->SyncWAL(), "collection: syncing the log");
  // Memtable to SST files, so the next open replays no log.
  if (st.ok()) st = FromRocks(m.db->Flush(rocksdb::FlushOptions()), "collection: flushing");
  {
    std::lock_guard<std::mutex> lock(m.state_mu);
    m.state.reset();
  }
  Status close = FromRocks(m.db->Close(), "collection: closing RocksDB");
  m.db.reset();
  m.closed = true;
  if (m.lock_fd >= 0) {
    ::close(m.lock_fd);
    m.lock_fd = -1;
  }
  return st.ok() ? close : st;
}

Status Collection::Flush() {
  return FromRocks(impl_->db->SyncWAL(), "collection: syncing the log");
}

std::uint64_t Collection::Count() const { return impl_->live.load(); }
std::uint32_t Collection::dim() const { return impl_->stored.dim; }
Metric Collection::metric() const { return impl_->stored.metric; }

CollectionStats Collection::Stats() const {
  const Impl& m = *impl_;
  CollectionSnapshot snap = m.Snapshot();
  CollectionStats s;
  s.dim = m.stored.dim;
  s.metric = m.stored.metric;
  s.element_type = m.stored.element_type;
  s.index_type = m.stored.index_type;
  s.graph_label_field = m.stored.graph_label_field;
  s.update_mode = m.stored.update_mode;
  s.in_place_inserts = m.in_place_inserts.load();
  s.in_place_hot_pages_rewritten = m.in_place_hot_pages_rewritten.load();
  s.in_place_insert_bytes_written = m.in_place_insert_bytes_written.load();
  s.in_place_insert_lists_changed = m.in_place_insert_lists_changed.load();
  s.in_place_upkeep_bytes_written = m.in_place_upkeep_bytes_written.load();
  s.in_place_repairs = m.in_place_repairs.load();
  s.in_place_compactions = m.in_place_compactions.load();
  if (s.index_type == "graph") {
    s.graph_R = m.stored.graph.R;
    s.graph_L = m.stored.graph.L;
  }
  s.live = m.live.load();
  if (snap.state->version) {
    const IndexVersion& v = *snap.state->version;
    s.indexed = v.size();
    s.deleted = v.dead_count();
    s.index_version = v.number();
    s.ram_bytes += v.memory_bytes();
    s.index_description = v.index().Describe();
    s.cached_nodes = v.index().cached_nodes();
    if (v.in_place()) {
      s.in_place_capacity_left = v.graph()->capacity() - v.graph()->num_vertices();
      s.in_place_repairs_queued = v.RepairsQueued();
      s.in_place_edge_pages = v.graph()->edge_pages();
      s.in_place_live_edge_pages = v.graph()->live_edge_pages();
    }
  }
  const std::uint64_t indexed_live = s.indexed - s.deleted;
  s.pending = s.live > indexed_live ? s.live - indexed_live : 0;
  s.pending_ram_bytes = snap.state->pending->memory_bytes();
  s.ram_bytes += s.pending_ram_bytes;
  s.merges = m.merges_done.load();
  s.streaming_merges = m.streaming_merges.load();
  s.log_syncs = m.log_syncs.load();
  s.background_cpus = m.background_cpus;
  s.merging = m.merging.load();
  s.last_merge_seconds = m.last_merge_seconds.load();
  s.first_build_seconds = m.first_build_seconds.load();
  s.last_sequence = snap.seq;
  s.payload_fields = snap.payload_index->fields();
  s.payload_index_bytes = snap.payload_index->MemoryBytes();
  s.ram_bytes += s.payload_index_bytes;
  // A merge may add or remove files meanwhile: iterate without throwing.
  std::error_code ec;
  for (fs::recursive_directory_iterator it(m.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code fec;
    if (it->is_regular_file(fec)) {
      const auto size = it->file_size(fec);
      if (!fec) s.disk_bytes += size;
    }
  }
  return s;
}

}  // namespace strata
