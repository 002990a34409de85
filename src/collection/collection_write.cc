// Collection writes: Upsert and Delete (one RocksDB write batch each, then
// the in-RAM pending set and death marks, then the visible sequence, after a
// group commit's fsync in sync mode), Get, and the stored element
// conversions.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_set>

#include "base/timer.h"
#include "collection/collection_impl.h"
#include "collection/store_keys.h"
#include "index/build_util.h"
#include "kernels/distance.h"

namespace strata {
namespace {

Status CheckUniqueIds(std::span<const VectorId> ids) {
  std::vector<VectorId> sorted(ids.begin(), ids.end());
  std::sort(sorted.begin(), sorted.end());
  auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) {
    return Status::InvalidArgument("id " + std::to_string(*dup) + " appears twice in one batch");
  }
  return Status::OK();
}

}  // namespace

Status Collection::Impl::CheckAndStore(std::span<const float> v, std::byte* out) const {
  double norm = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      return Status::InvalidArgument("value " + std::to_string(i) + " is NaN or Inf");
    }
    norm += static_cast<double>(v[i]) * v[i];
  }
  if (stored.metric == Metric::kCosine && norm == 0) {
    return Status::InvalidArgument("a zero vector has no cosine distance");
  }
  switch (stored.element_type) {
    case ElementType::kFloat32:
      std::memcpy(out, v.data(), v.size() * sizeof(float));
      return Status::OK();
    case ElementType::kFloat16:
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (std::fabs(v[i]) > 65504.0f) {
          return Status::InvalidArgument("value " + std::to_string(i) +
                                         " is out of float16's range");
        }
      }
      kernels::FloatToHalfN(v.data(), reinterpret_cast<std::uint16_t*>(out), v.size());
      return Status::OK();
    case ElementType::kUint8:
    case ElementType::kInt8: {
      const bool u8 = stored.element_type == ElementType::kUint8;
      const float lo = u8 ? 0.0f : -128.0f;
      const float hi = u8 ? 255.0f : 127.0f;
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (v[i] != std::nearbyint(v[i]) || v[i] < lo || v[i] > hi) {
          return Status::InvalidArgument("value " + std::to_string(i) + " (" +
                                         std::to_string(v[i]) + ") is not an integer in [" +
                                         std::to_string(static_cast<int>(lo)) + ", " +
                                         std::to_string(static_cast<int>(hi)) + "]");
        }
        if (u8) {
          reinterpret_cast<std::uint8_t*>(out)[i] = static_cast<std::uint8_t>(v[i]);
        } else {
          reinterpret_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(v[i]);
        }
      }
      return Status::OK();
    }
    case ElementType::kBFloat16:
      // float32's exponent range: every finite value has a (rounded) bfloat16.
      kernels::FloatToBFloat16N(v.data(), reinterpret_cast<std::uint16_t*>(out), v.size());
      return Status::OK();
  }
  return Status::NotSupported("element type " + std::string(ElementTypeName(stored.element_type)));
}

void Collection::Impl::LoadFloat(const std::byte* in, float* out) const {
  WidenToFloat(stored.element_type, in, stored.dim, out);
}

std::vector<rocksdb::Status> Collection::Impl::GetRecords(std::span<const VectorId> ids,
                                                         std::vector<std::string>* values) const {
  std::vector<std::string> keys(ids.size());
  std::vector<rocksdb::Slice> slices(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    keys[i] = collection::IdKey(collection::kVectorPrefix, ids[i]);
    slices[i] = keys[i];
  }
  return db->MultiGet(rocksdb::ReadOptions(), slices, values);
}

bool Collection::Impl::MergeDue() const {
  const CollectionState& s = current();
  if (!s.version) return false;  // the threshold's first build is synchronous
  if (s.version->in_place()) {
    // The applier drains the pending list; a merge rebuilds the whole
    // index, when the graph is full or too much of it is dead.
    if (s.version->full()) return true;
    // (Not merge_pending_count's floor: dead vertices are never repaired in
    // place, and a small graph half dead lost a tenth of its recall.)
    constexpr std::uint64_t kMinDead = 64;
    const auto dead_limit = static_cast<std::uint64_t>(options.in_place_rebuild_dead_ratio *
                                                       static_cast<double>(s.version->size()));
    return s.version->dead_count() >= std::max(kMinDead, dead_limit);
  }
  if (budget_waiters > 0 && !pending_pos.empty()) return true;  // writers wait for the memory budget
  const std::uint64_t pending = pending_pos.size();
  const std::uint64_t dead = s.version->dead_count();
  if (pending + dead == 0) return false;
  const auto by_ratio =
      static_cast<std::uint64_t>(options.merge_pending_ratio * static_cast<double>(s.version->size()));
  const std::uint64_t due = std::max(options.merge_pending_count, by_ratio);
  if (pending >= due || dead >= due) return true;
  const std::uint64_t bytes = pending * vector_bytes;
  return options.merge_pending_bytes > 0 && bytes >= options.merge_pending_bytes;
}

Status Collection::Impl::Acknowledge(std::uint64_t seq) {
  if (!group_commit) {
    Publish(nullptr, seq);  // in the OS's hands: survives kill -9
    return Status::OK();
  }
  // Visible implies durable: MarkDurable publishes before it advances
  // durable_seq, so returning on this check never precedes visibility.
  if (durable_seq.load(std::memory_order_acquire) >= seq) return Status::OK();
  std::lock_guard<std::mutex> lock(sync_mu);
  if (durable_seq.load(std::memory_order_acquire) >= seq) return Status::OK();  // a leader's fsync covered it
  // Lead: one fsync for every write logged so far, this one included.
  const std::uint64_t target = logged_seq.load(std::memory_order_acquire);
  // On failure the outcome of the writes it covered is unknown (the log may
  // hold them): the caller gets the error, and a later successful fsync
  // makes them visible.
  STRATA_RETURN_IF_ERROR(FromRocks(db->SyncWAL(), "syncing the log"));
  log_syncs++;
  MarkDurable(target);
  return Status::OK();
}

void Collection::Impl::MarkDurable(std::uint64_t seq) {
  Publish(nullptr, seq);
  std::uint64_t cur = durable_seq.load(std::memory_order_acquire);
  while (cur < seq && !durable_seq.compare_exchange_weak(cur, seq, std::memory_order_acq_rel)) {
  }
}

void Collection::Impl::RequestMerge() {
  if (!options.background_merge) return;
  {
    std::lock_guard<std::mutex> lock(bg_mu);
    merge_wanted = true;
  }
  bg_cv.notify_all();
}

Status Collection::Upsert(VectorId id, std::span<const float> vector, std::string_view payload) {
  const std::string p(payload);
  return Upsert(std::span<const VectorId>(&id, 1), vector,
                payload.empty() ? std::span<const std::string>() : std::span<const std::string>(&p, 1));
}

Status Collection::Upsert(std::span<const VectorId> ids, std::span<const float> vectors,
                          std::span<const std::string> payloads) {
  Impl& m = *impl_;
  const std::size_t n = ids.size();
  const std::uint32_t dim = m.stored.dim;
  if (n == 0) return Status::InvalidArgument("upsert: empty batch");
  if (n > m.options.max_batch) {
    return Status::InvalidArgument("upsert: batch of " + std::to_string(n) +
                                   " exceeds max_batch " + std::to_string(m.options.max_batch));
  }
  if (vectors.size() != n * dim) {
    return Status::InvalidArgument("upsert: " + std::to_string(vectors.size()) +
                                   " floats for " + std::to_string(n) + " vectors of dim " +
                                   std::to_string(dim) + " (expected " +
                                   std::to_string(n * dim) + ")");
  }
  if (!payloads.empty() && payloads.size() != n) {
    return Status::InvalidArgument("upsert: " + std::to_string(payloads.size()) +
                                   " payloads for " + std::to_string(n) + " vectors");
  }
  STRATA_RETURN_IF_ERROR(CheckUniqueIds(ids));
  std::vector<std::byte> stored(m.vector_bytes);
  std::vector<std::string> records(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view payload = payloads.empty() ? std::string_view() : payloads[i];
    if (payload.size() > m.options.max_payload_bytes) {
      return Status::InvalidArgument("upsert: payload of id " + std::to_string(ids[i]) + " is " +
                                     std::to_string(payload.size()) + " bytes (limit " +
                                     std::to_string(m.options.max_payload_bytes) + ")");
    }
    Status st = m.CheckAndStore(vectors.subspan(i * dim, dim), stored.data());
    if (!st.ok()) {
      return Status::InvalidArgument("upsert: vector of id " + std::to_string(ids[i]) + ": " +
                                     std::string(st.message()));
    }
    records[i] = collection::EncodeRecord(0, stored, payload);  // seq patched below
  }
  std::vector<float> row(dim);
  bool first_build = false;
  std::uint64_t upsert_seq = 0;
  {
    std::unique_lock<std::mutex> lock(m.write_mu);
    // Memory budget: wait for a merge to drain the pending vectors.
    // (In place, the applier drains the pending list, not merges.)
    while (m.options.memory_budget_bytes > 0 && !m.in_place() && m.current().version &&
           m.current().pending->MemoryBytesWith(n) > m.options.memory_budget_bytes &&
           !m.pending_pos.empty() && m.options.background_merge) {
      if (m.merge_stop.stop_requested()) {
        return Status::Busy("upsert: the pending vectors fill the memory budget and merges are "
                            "stopped (the collection is closing)");
      }
      m.last_merge_error = Status::OK();
      ++m.budget_waiters;  // MergeDue while a writer waits here
      m.RequestMerge();
      m.merge_done_cv.wait(lock);
      --m.budget_waiters;
      if (!m.last_merge_error.ok()) {
        return Status::Busy("upsert: the pending vectors fill the memory budget and the merge "
                            "that would drain them failed: " +
                            std::string(m.last_merge_error.message()));
      }
    }
    const std::uint64_t seq = m.last_seq + 1;
    const CollectionState& cur = m.current();
    rocksdb::WriteBatch batch;
    std::uint64_t added = 0;
    for (std::size_t i = 0; i < n; ++i) {
      // The record's sequence: bytes 1..8 of the encoding.
      const std::string s = collection::EncodeU64(seq);
      std::memcpy(records[i].data() + 1, s.data(), 8);
      batch.Put(collection::IdKey(collection::kVectorPrefix, ids[i]), records[i]);
      batch.Put(collection::IdKey(collection::kPendingPrefix, ids[i]), s);
      const bool in_pending = m.pending_pos.count(ids[i]) > 0;
      bool in_index = false;
      if (cur.version) {
        if (auto slot = cur.version->SlotOf(ids[i])) in_index = cur.version->LiveAt(*slot, m.last_seq);
      }
      // A tombstone whenever an older copy exists anywhere: the index's, or
      // one a running merge may be writing into the next version.
      if (in_pending || in_index) {
        batch.Put(collection::IdKey(collection::kTombstonePrefix, ids[i]), s);
      } else {
        ++added;
      }
    }
    batch.Put(collection::MetaKey("seq"), collection::EncodeU64(seq));
    STRATA_RETURN_IF_ERROR(FromRocks(m.db->Write(m.write_options, &batch), "upsert"));
    // Durable: apply to RAM. Nothing below can fail but the pending
    // capacity, which the recovery at the next open would also hit.
    m.last_seq = seq;
    for (std::size_t i = 0; i < n; ++i) {
      const VectorId id = ids[i];
      auto it = m.pending_pos.find(id);
      if (it != m.pending_pos.end()) {
        cur.pending->MarkDead(it->second, seq);
        m.tombstones[id] = seq;
      } else if (cur.version) {
        if (auto slot = cur.version->SlotOf(id); slot && cur.version->LiveAt(*slot, seq - 1)) {
          cur.version->MarkDead(*slot, seq);
          cur.version->EnqueueRepair(*slot);
          m.tombstones[id] = seq;
        }
      }
      m.LoadFloat(reinterpret_cast<const std::byte*>(records[i].data() + 13), row.data());
      STRATA_ASSIGN_OR_RETURN(std::uint32_t pos, cur.pending->Append(id, row.data(), seq));
      m.pending_pos[id] = pos;
      m.payload_index->Set(id, payloads.empty() ? std::string_view() : payloads[i]);
    }
    m.live += added;
    m.logged_seq.store(seq, std::memory_order_release);
    upsert_seq = seq;
    m.WakeIndexer();
    m.WakeApplier();
    first_build = !cur.version && m.live >= m.options.flat_threshold;
    if (!first_build && m.MergeDue()) m.RequestMerge();
  }
  STRATA_RETURN_IF_ERROR(m.Acknowledge(upsert_seq));
  if (first_build) {
    // DefraDB's DISKANN lifecycle: the write that crosses the threshold
    // trains and builds the first SSD index before it returns.
    // The write itself is durable and visible already: a failed build does
    // not un-acknowledge it. The collection stays in the flat phase, the
    // error is kept for Merge/WaitForMerge, and the next write retries.
    (void)m.RunMerge(0, /*first_only=*/true);
  }
  return Status::OK();
}

Result<std::uint64_t> Collection::Delete(std::span<const VectorId> ids) {
  Impl& m = *impl_;
  if (ids.empty()) return Status::InvalidArgument("delete: empty batch");
  if (ids.size() > m.options.max_batch) {
    return Status::InvalidArgument("delete: batch of " + std::to_string(ids.size()) +
                                   " exceeds max_batch " + std::to_string(m.options.max_batch));
  }
  STRATA_RETURN_IF_ERROR(CheckUniqueIds(ids));
  std::unique_lock<std::mutex> lock(m.write_mu);
  const CollectionState& cur = m.current();
  const std::uint64_t seq = m.last_seq + 1;
  const std::string s = collection::EncodeU64(seq);
  rocksdb::WriteBatch batch;
  std::vector<VectorId> existing;
  for (VectorId id : ids) {
    bool exists = m.pending_pos.count(id) > 0;
    if (!exists && cur.version) {
      if (auto slot = cur.version->SlotOf(id)) exists = cur.version->LiveAt(*slot, m.last_seq);
    }
    if (!exists) continue;
    existing.push_back(id);
    batch.Delete(collection::IdKey(collection::kVectorPrefix, id));
    batch.Delete(collection::IdKey(collection::kPendingPrefix, id));
    batch.Put(collection::IdKey(collection::kTombstonePrefix, id), s);
  }
  if (existing.empty()) return std::uint64_t{0};
  batch.Put(collection::MetaKey("seq"), s);
  STRATA_RETURN_IF_ERROR(FromRocks(m.db->Write(m.write_options, &batch), "delete"));
  m.last_seq = seq;
  for (VectorId id : existing) {
    auto it = m.pending_pos.find(id);
    if (it != m.pending_pos.end()) {
      cur.pending->MarkDead(it->second, seq);
      m.pending_pos.erase(it);
    } else if (auto slot = cur.version->SlotOf(id)) {
      cur.version->MarkDead(*slot, seq);
      cur.version->EnqueueRepair(*slot);
    }
    m.tombstones[id] = seq;
    m.payload_index->Erase(id);
  }
  m.live -= existing.size();
  m.logged_seq.store(seq, std::memory_order_release);
  if (m.MergeDue()) m.RequestMerge();
  lock.unlock();
  STRATA_RETURN_IF_ERROR(m.Acknowledge(seq));
  return static_cast<std::uint64_t>(existing.size());
}

Result<std::vector<StoredRecord>> Collection::Get(std::span<const VectorId> ids) const {
  const Impl& m = *impl_;
  std::vector<std::string> values;
  const std::vector<rocksdb::Status> st = m.GetRecords(ids, &values);
  std::vector<StoredRecord> out(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out[i].id = ids[i];
    if (st[i].IsNotFound()) continue;
    STRATA_RETURN_IF_ERROR(FromRocks(st[i], "get " + std::to_string(ids[i])));
    STRATA_ASSIGN_OR_RETURN(auto rec, collection::DecodeRecord(values[i], m.vector_bytes));
    out[i].found = true;
    out[i].vector.resize(m.stored.dim);
    m.LoadFloat(reinterpret_cast<const std::byte*>(rec.vector.data()), out[i].vector.data());
    out[i].payload.assign(rec.payload);
  }
  return out;
}

}  // namespace strata
