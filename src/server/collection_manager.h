// The collections one server holds: each a strata::Collection directory
// under <data>/collections/<name>, reopened at start, plus the ids each
// holds. Collection has no way to enumerate its ids, and count/scroll need
// them, so the server keeps a sorted id set per collection, backed by an
// append-only log in <data>/ids/<name>.log ("+id" before an upsert, "-id"
// after a delete). The log may list ids a crash kept out of the collection;
// at open each listed id is checked with Collection::Get, so the set is exact.
// <data>/ids/<name>.options.json keeps the per-open options it was created with.
#ifndef STRATA_SERVER_COLLECTION_MANAGER_H_
#define STRATA_SERVER_COLLECTION_MANAGER_H_

#include <atomic>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "strata/collection.h"
#include "strata/result.h"

namespace strata::server {

class ServedCollection {
 public:
  // `dir` and `reopen` are where and how Quiesce reopens the collection.
  // `uuids`: the id log says some point was upserted with a UUID id.
  ServedCollection(std::string name, std::unique_ptr<Collection> c, std::FILE* log,
                   std::set<VectorId> ids, bool uuids, std::string dir, CollectionOptions reopen);
  ~ServedCollection();

  const std::string& name() const { return name_; }
  Collection& collection() { return *collection_; }
  // The per-open options it runs with (merge policy, durability, threshold).
  const CollectionOptions& options() const { return reopen_; }
  // Upsert/Delete through here keep the id set in step with the collection.
  // `any_uuid`: some of `ids` stand for UUIDs (kept in their payloads).
  Status Upsert(std::span<const VectorId> ids, std::span<const float> vectors,
                std::span<const std::string> payloads, bool any_uuid);
  // Whether a point may carry a UUID id: a search that returns no payload
  // must still read the hits' payloads to answer with those ids. Once true,
  // stays true (the id log keeps a mark).
  bool may_have_uuids() const { return uuids_.load(std::memory_order_acquire); }
  Result<std::uint64_t> Delete(std::span<const VectorId> ids);
  // Up to `max` ids >= `from`, ascending.
  std::vector<VectorId> IdsFrom(VectorId from, std::size_t max) const;
  std::uint64_t size() const;
  // Held (shared) by every request for its whole use of the collection, so
  // that Close (exclusive) never races a search: Collection::Close must not.
  // The lock does not own the collection; check closed() once holding it.
  std::shared_lock<std::shared_mutex> Use() const { return std::shared_lock(life_mu_); }
  bool closed() const { return closed_; }
  // Abandons the collection's running merge and starts no more
  // (Collection::StopMerges): Close is then quick. Nothing is lost.
  void StopMerges();
  Status Close();
  // Runs `fn` while the collection is closed (its directory and the id log
  // consistent on disk, no request in flight: new ones wait), then reopens
  // it. fn's error is returned after the reopen; if the reopen fails the
  // collection stays closed.
  Status Quiesce(const std::function<Status()>& fn);

 private:
  // Lines `op id` (and first the UUID mark when `uuid_mark`), flushed to the OS.
  Status AppendLog(char op, std::span<const VectorId> ids, bool uuid_mark = false);

  std::string name_;
  std::string dir_;
  CollectionOptions reopen_;
  std::unique_ptr<Collection> collection_;
  std::mutex write_mu_;  // one writer at a time: log order == collection order
  mutable std::shared_mutex ids_mu_;
  std::FILE* log_;
  std::set<VectorId> ids_;
  std::atomic<bool> uuids_{false};
  mutable std::shared_mutex life_mu_;
  bool closed_ = false;  // guarded by life_mu_
};

class CollectionManager {
 public:
  explicit CollectionManager(std::string data_dir) : data_dir_(std::move(data_dir)) {}
  // Opens every collection directory under <data>/collections.
  Status OpenAll();
  // InvalidArgument for a bad name; Busy ("already exists") if present.
  Status Create(const std::string& name, const CollectionOptions& options);
  std::shared_ptr<ServedCollection> Get(const std::string& name) const;
  // False if absent.
  Result<bool> Drop(const std::string& name);
  std::vector<std::string> Names() const;
  // Closes (flushes) every collection, after stopping every merge (a
  // stopping server does not wait for index builds: their inputs are durable
  // and are merged after the next start).
  Status CloseAll();

  // Snapshots (snapshots.cc): one tar file per snapshot under
  // <data>/snapshots/<name>/. Create quiesces the collection while it copies;
  // Recover replaces the collection (or creates it) from a snapshot given by
  // name or by a file:// URL inside <data>/snapshots.
  struct SnapshotInfo {
    std::string name;
    std::string creation_time;  // UTC, "2024-07-22T08:31:55"
    std::uint64_t size = 0;
  };
  Result<SnapshotInfo> CreateSnapshot(const std::string& name);
  Result<std::vector<SnapshotInfo>> ListSnapshots(const std::string& name) const;
  Status RecoverSnapshot(const std::string& name, const std::string& location);
  Status DeleteSnapshot(const std::string& name, const std::string& snapshot);

  // Letters, digits, '_', '-', '.', 1..255 chars, not "." or "..".
  static Status CheckName(const std::string& name);

 private:
  Result<std::shared_ptr<ServedCollection>> OpenOne(const std::string& name,
                                                    const CollectionOptions& options);
  std::string CollectionDir(const std::string& name) const;
  std::string LogPath(const std::string& name) const;
  std::string MetaPath(const std::string& name) const;
  std::string SnapshotDir(const std::string& name) const;
  static Status WriteOpenOptions(const std::string& path, const CollectionOptions& o);
  static Status ReadOpenOptions(const std::string& path, CollectionOptions* o);

  std::string data_dir_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<ServedCollection>> collections_;
};

}  // namespace strata::server

#endif  // STRATA_SERVER_COLLECTION_MANAGER_H_
