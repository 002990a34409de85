#include "server/collection_manager.h"

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "server/collection_config.h"

namespace strata::server {
namespace fs = std::filesystem;

ServedCollection::ServedCollection(std::string name, std::unique_ptr<Collection> c, std::FILE* log,
                                   std::set<VectorId> ids, bool uuids, std::string dir,
                                   CollectionOptions reopen)
    : name_(std::move(name)),
      dir_(std::move(dir)),
      reopen_(std::move(reopen)),
      collection_(std::move(c)),
      log_(log),
      ids_(std::move(ids)),
      uuids_(uuids) {
  reopen_.create_if_missing = false;
  reopen_.error_if_exists = false;
}

ServedCollection::~ServedCollection() { Close().IgnoreError(); }

namespace {
// The id log's mark that some point has a UUID id (a line that is no id).
constexpr std::string_view kUuidMark = "#uuids";
}  // namespace

Status ServedCollection::AppendLog(char op, std::span<const VectorId> ids, bool uuid_mark) {
  std::string text;
  text.reserve(ids.size() * 12 + kUuidMark.size() + 1);
  if (uuid_mark) {
    text += kUuidMark;
    text.push_back('\n');
  }
  for (VectorId id : ids) {
    text.push_back(op);
    text += std::to_string(id);
    text.push_back('\n');
  }
  // Written to the OS before the collection write: a kill -9 after it keeps
  // the line, and open drops ids the collection does not hold.
  if (std::fwrite(text.data(), 1, text.size(), log_) != text.size() || std::fflush(log_) != 0) {
    return Status::FromErrno("id log of collection " + name_, errno);
  }
  return Status::OK();
}

Status ServedCollection::Upsert(std::span<const VectorId> ids, std::span<const float> vectors,
                                std::span<const std::string> payloads, bool any_uuid) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (log_ == nullptr) return Status::Aborted("collection " + name_ + " is closed");
  const bool mark = any_uuid && !uuids_.load();
  STRATA_RETURN_IF_ERROR(AppendLog('+', ids, mark));
  // Set before the write: a search that sees the point reads its payload.
  if (mark) uuids_.store(true, std::memory_order_release);
  STRATA_RETURN_IF_ERROR(collection_->Upsert(ids, vectors, payloads));
  std::unique_lock<std::shared_mutex> ids_lock(ids_mu_);
  ids_.insert(ids.begin(), ids.end());
  return Status::OK();
}

Result<std::uint64_t> ServedCollection::Delete(std::span<const VectorId> ids) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (log_ == nullptr) return Status::Aborted("collection " + name_ + " is closed");
  Result<std::uint64_t> n = collection_->Delete(ids);
  if (!n.ok()) return n;
  {
    std::unique_lock<std::shared_mutex> ids_lock(ids_mu_);
    for (VectorId id : ids) ids_.erase(id);
  }
  STRATA_RETURN_IF_ERROR(AppendLog('-', ids));
  return n;
}

std::vector<VectorId> ServedCollection::IdsFrom(VectorId from, std::size_t max) const {
  std::shared_lock<std::shared_mutex> lock(ids_mu_);
  std::vector<VectorId> out;
  for (auto it = ids_.lower_bound(from); it != ids_.end() && out.size() < max; ++it) {
    out.push_back(*it);
  }
  return out;
}

std::uint64_t ServedCollection::size() const {
  std::shared_lock<std::shared_mutex> lock(ids_mu_);
  return ids_.size();
}

void ServedCollection::StopMerges() {
  auto use = Use();
  if (!closed_) collection_->StopMerges();
}

Status ServedCollection::Close() {
  std::unique_lock<std::shared_mutex> life(life_mu_);  // waits for requests in flight
  closed_ = true;
  std::lock_guard<std::mutex> lock(write_mu_);
  if (log_ == nullptr) return Status::OK();
  std::fclose(log_);
  log_ = nullptr;
  return collection_->Close();
}

Status ServedCollection::Quiesce(const std::function<Status()>& fn) {
  std::unique_lock<std::shared_mutex> life(life_mu_);  // waits for requests in flight
  if (closed_) return Status::NotFound("collection " + name_ + " is closed");
  std::lock_guard<std::mutex> lock(write_mu_);
  Status closed = collection_->Close();
  const Status st = closed.ok() ? fn() : closed;
  Result<std::unique_ptr<Collection>> c = Collection::Open(dir_, reopen_);
  if (!c.ok()) {
    closed_ = true;
    std::fclose(log_);
    log_ = nullptr;
    return c.status().WithContext("reopening collection " + name_);
  }
  collection_ = std::move(c.value());
  return st;
}

Status CollectionManager::CheckName(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") {
    return Status::InvalidArgument("collection name must be 1..255 characters");
  }
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      return Status::InvalidArgument("collection name '" + name +
                                     "' may hold only letters, digits, '_', '-' and '.'");
    }
  }
  return Status::OK();
}

std::string CollectionManager::CollectionDir(const std::string& name) const {
  return data_dir_ + "/collections/" + name;
}
std::string CollectionManager::MetaPath(const std::string& name) const {
  return data_dir_ + "/ids/" + name + ".options.json";
}

// The per-open options a collection was created with (Collection stores only
// its creation fields), so that a restart keeps its durability and threshold.
Status CollectionManager::WriteOpenOptions(const std::string& path, const CollectionOptions& o) {
  const nlohmann::json j = OpenOptionsJson(o);
  std::ofstream out(path, std::ios::trunc);
  out << j.dump() << "\n";
  out.flush();
  return out ? Status::OK() : Status::IOError("cannot write " + path);
}

Status CollectionManager::ReadOpenOptions(const std::string& path, CollectionOptions* o) {
  std::ifstream in(path);
  if (!in) return Status::OK();  // made by an older server or by hand: defaults
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  return ApplyOpenOptionsJson(j, o).WithContext(path);
}

std::string CollectionManager::LogPath(const std::string& name) const {
  return data_dir_ + "/ids/" + name + ".log";
}

Result<std::shared_ptr<ServedCollection>> CollectionManager::OpenOne(
    const std::string& name, const CollectionOptions& options) {
  Result<std::unique_ptr<Collection>> c = Collection::Open(CollectionDir(name), options);
  if (!c.ok()) return c.status().WithContext("collection " + name);
  // Replay the id log, then keep only ids the collection holds.
  std::set<VectorId> listed;
  bool uuids = false;
  {
    std::ifstream in(LogPath(name));
    std::string line;
    while (std::getline(in, line)) {
      if (line == kUuidMark) {
        uuids = true;
        continue;
      }
      if (line.size() < 2) continue;  // a torn last line
      VectorId id = 0;
      try {
        id = std::stoull(line.substr(1));
      } catch (...) {
        continue;
      }
      if (line[0] == '+') listed.insert(id);
      if (line[0] == '-') listed.erase(id);
    }
  }
  std::set<VectorId> ids;
  std::vector<VectorId> chunk;
  auto check = [&]() -> Status {
    Result<std::vector<StoredRecord>> recs = c.value()->Get(chunk);
    if (!recs.ok()) return recs.status();
    for (const StoredRecord& r : recs.value()) {
      if (r.found) ids.insert(r.id);
    }
    chunk.clear();
    return Status::OK();
  };
  for (VectorId id : listed) {
    chunk.push_back(id);
    if (chunk.size() == 4096) STRATA_RETURN_IF_ERROR(check());
  }
  if (!chunk.empty()) STRATA_RETURN_IF_ERROR(check());
  // Rewrite the log compacted (to a temp file, renamed: a crash keeps one whole log).
  const std::string tmp = LogPath(name) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (uuids) out << kUuidMark << '\n';
    for (VectorId id : ids) out << '+' << id << '\n';
    out.flush();
    if (!out) return Status::IOError("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, LogPath(name), ec);
  if (ec) return Status::IOError("rename " + tmp + ": " + ec.message());
  std::FILE* log = std::fopen(LogPath(name).c_str(), "a");
  if (log == nullptr) return Status::FromErrno("open " + LogPath(name), errno);
  return std::make_shared<ServedCollection>(name, std::move(c.value()), log, std::move(ids), uuids,
                                            CollectionDir(name), options);
}

Status CollectionManager::OpenAll() {
  std::error_code ec;
  fs::create_directories(data_dir_ + "/collections", ec);
  if (ec) return Status::IOError("create " + data_dir_ + "/collections: " + ec.message());
  fs::create_directories(data_dir_ + "/ids", ec);
  if (ec) return Status::IOError("create " + data_dir_ + "/ids: " + ec.message());
  for (const auto& entry : fs::directory_iterator(data_dir_ + "/collections")) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || !CheckName(name).ok()) continue;
    CollectionOptions options;
    options.create_if_missing = false;
    STRATA_RETURN_IF_ERROR(ReadOpenOptions(MetaPath(name), &options));
    Result<std::shared_ptr<ServedCollection>> sc = OpenOne(name, options);
    if (!sc.ok()) return sc.status();
    std::lock_guard<std::mutex> lock(mu_);
    collections_[name] = sc.value();
  }
  return Status::OK();
}

Status CollectionManager::Create(const std::string& name, const CollectionOptions& options) {
  STRATA_RETURN_IF_ERROR(CheckName(name));
  std::lock_guard<std::mutex> lock(mu_);  // creations are rare; holding it keeps names unique
  if (collections_.count(name)) return Status::Busy("collection '" + name + "' already exists");
  CollectionOptions o = options;
  o.error_if_exists = true;
  std::error_code ec;
  fs::remove(LogPath(name), ec);  // a stale log of a dropped collection
  STRATA_RETURN_IF_ERROR(WriteOpenOptions(MetaPath(name), o));
  Result<std::shared_ptr<ServedCollection>> sc = OpenOne(name, o);
  if (!sc.ok()) {
    fs::remove_all(CollectionDir(name), ec);
    return sc.status();
  }
  collections_[name] = sc.value();
  return Status::OK();
}

std::shared_ptr<ServedCollection> CollectionManager::Get(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = collections_.find(name);
  return it == collections_.end() ? nullptr : it->second;
}

Result<bool> CollectionManager::Drop(const std::string& name) {
  std::shared_ptr<ServedCollection> sc;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = collections_.find(name);
    if (it == collections_.end()) return false;
    sc = it->second;
    collections_.erase(it);
  }
  // Requests still holding it finish first: Close waits for their writes;
  // searches on it keep the Collection object alive through the shared_ptr.
  // Its merge is abandoned: the directory goes.
  sc->StopMerges();
  STRATA_RETURN_IF_ERROR(sc->Close());
  std::error_code ec;
  fs::remove_all(CollectionDir(name), ec);
  if (ec) return Status::IOError("remove " + CollectionDir(name) + ": " + ec.message());
  fs::remove(LogPath(name), ec);
  fs::remove(MetaPath(name), ec);
  return true;
}

std::vector<std::string> CollectionManager::Names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  for (const auto& [name, c] : collections_) out.push_back(name);
  return out;
}

Status CollectionManager::CloseAll() {
  std::map<std::string, std::shared_ptr<ServedCollection>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    all.swap(collections_);
  }
  for (auto& [name, c] : all) c->StopMerges();
  Status first;
  for (auto& [name, c] : all) {
    Status s = c->Close();
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

}  // namespace strata::server
