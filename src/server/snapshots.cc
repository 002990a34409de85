// Collection snapshots (Qdrant's /collections/{name}/snapshots endpoints).
// A snapshot is a tar file <data>/snapshots/<name>/<name>-<ms>-<date>.snapshot
// holding collection/ (the collection directory), ids.log and options.json.
// It is taken while the collection is closed (ServedCollection::Quiesce):
// Collection has no checkpoint of its own, and a closed directory is
// consistent by construction (RocksDB synced, no merge running); requests
// wait for the copy, which costs one read of the collection's files.
// A recover is not atomic across a crash: killed between moving the
// directory and the id log into place, the collection may open with the
// other side's id log (scroll then misses ids; count does not). Running the
// recover again repairs it; the snapshot file is untouched.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>

#include "server/collection_manager.h"
#include "server/handlers.h"
#include "server/tar.h"

namespace strata::server {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSuffix = ".snapshot";

// "2024-07-22T08:31:55" from the date at the end of a snapshot's name, "" if none.
std::string CreationTime(const std::string& file) {
  const std::size_t date_len = 19;  // YYYY-MM-DD-HH-MM-SS
  const std::size_t suffix = std::string(kSuffix).size();
  if (file.size() < date_len + suffix) return "";
  std::string d = file.substr(file.size() - suffix - date_len, date_len);
  if (d[4] != '-' || d[7] != '-' || d[10] != '-') return "";
  d[10] = 'T';
  d[13] = ':';
  d[16] = ':';
  return d;
}

std::string DateNow(std::chrono::system_clock::time_point now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d-%H-%M-%S", &tm);
  return buf;
}

// Whether `path` is inside `dir` (both made absolute and normalised).
bool Inside(const fs::path& path, const fs::path& dir) {
  const fs::path p = fs::weakly_canonical(path), d = fs::weakly_canonical(dir);
  auto [dend, pit] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
  return dend == d.end() && pit != p.end();
}

}  // namespace

std::string CollectionManager::SnapshotDir(const std::string& name) const {
  return data_dir_ + "/snapshots/" + name;
}

Result<CollectionManager::SnapshotInfo> CollectionManager::CreateSnapshot(const std::string& name) {
  std::shared_ptr<ServedCollection> sc = Get(name);
  if (sc == nullptr) return Status::NotFound("Collection `" + name + "` doesn't exist!");
  std::error_code ec;
  fs::create_directories(SnapshotDir(name), ec);
  if (ec) return Status::IOError("create " + SnapshotDir(name) + ": " + ec.message());
  const auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::string file;
  do {  // unique even for two snapshots in one millisecond
    file = name + "-" + std::to_string(ms++) + "-" + DateNow(now) + kSuffix;
  } while (fs::exists(SnapshotDir(name) + "/" + file));
  const std::string path = SnapshotDir(name) + "/" + file;
  const std::string tmp = path + ".tmp";
  std::vector<std::pair<std::string, std::string>> entries = {{"collection", CollectionDir(name)}};
  if (fs::exists(LogPath(name))) entries.emplace_back("ids.log", LogPath(name));
  if (fs::exists(MetaPath(name))) entries.emplace_back("options.json", MetaPath(name));
  Status st = sc->Quiesce([&] { return WriteTar(tmp, entries); });
  if (!st.ok()) {
    fs::remove(tmp, ec);
    return st;
  }
  fs::rename(tmp, path, ec);
  if (ec) return Status::IOError("rename " + tmp + ": " + ec.message());
  return SnapshotInfo{file, CreationTime(file), fs::file_size(path, ec)};
}

Result<std::vector<CollectionManager::SnapshotInfo>> CollectionManager::ListSnapshots(
    const std::string& name) const {
  if (Get(name) == nullptr) return Status::NotFound("Collection `" + name + "` doesn't exist!");
  std::vector<SnapshotInfo> out;
  std::error_code ec;
  if (!fs::is_directory(SnapshotDir(name), ec)) return out;
  for (const auto& e : fs::directory_iterator(SnapshotDir(name), ec)) {
    const std::string file = e.path().filename().string();
    if (!e.is_regular_file() || !file.ends_with(kSuffix)) continue;
    out.push_back(SnapshotInfo{file, CreationTime(file), e.file_size(ec)});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Status CollectionManager::RecoverSnapshot(const std::string& name, const std::string& location) {
  STRATA_RETURN_IF_ERROR(CheckName(name));
  // Only files the server's snapshot directory holds: a request must not
  // make the server read (and serve) an arbitrary file of its host.
  fs::path path;
  if (location.rfind("file://", 0) == 0) {
    path = location.substr(7);
  } else if (location.find("://") != std::string::npos) {
    return Status::NotSupported("snapshot location: only file:// URLs and snapshot names are supported");
  } else if (location.empty() || location.find('/') != std::string::npos || location == "..") {
    return Status::InvalidArgument("snapshot location: '" + location + "' is not a snapshot name");
  } else {
    path = SnapshotDir(name) + "/" + location;
  }
  if (!path.is_absolute() || !Inside(path, data_dir_ + "/snapshots")) {
    return Status::InvalidArgument("snapshot location must be inside " + data_dir_ + "/snapshots");
  }
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return Status::NotFound("snapshot " + path.string() + " not found");

  const std::string staging = data_dir_ + "/snapshots/.recover-" + name;
  fs::remove_all(staging, ec);
  Status st = ExtractTar(path.string(), staging);
  if (st.ok() && !IsCollectionDirectory(staging + "/collection")) {
    st = Status::Corruption("snapshot " + path.string() + " holds no collection");
  }
  if (!st.ok()) {
    fs::remove_all(staging, ec);
    return st;
  }
  std::lock_guard<std::mutex> lock(mu_);  // like Create: names stay unique meanwhile
  if (auto it = collections_.find(name); it != collections_.end()) {
    std::shared_ptr<ServedCollection> old = it->second;
    collections_.erase(it);
    STRATA_RETURN_IF_ERROR(old->Close());  // waits for the requests using it
  }
  fs::remove_all(CollectionDir(name), ec);
  if (ec) return Status::IOError("remove " + CollectionDir(name) + ": " + ec.message());
  fs::rename(staging + "/collection", CollectionDir(name), ec);
  if (ec) return Status::IOError("move the snapshot's collection into place: " + ec.message());
  for (const auto& [from, to] : {std::pair{staging + "/ids.log", LogPath(name)},
                                 std::pair{staging + "/options.json", MetaPath(name)}}) {
    fs::remove(to, ec);
    if (fs::exists(from)) fs::rename(from, to, ec);
    if (ec) return Status::IOError("move " + from + ": " + ec.message());
  }
  fs::remove_all(staging, ec);
  CollectionOptions options;
  options.create_if_missing = false;
  STRATA_RETURN_IF_ERROR(ReadOpenOptions(MetaPath(name), &options));
  Result<std::shared_ptr<ServedCollection>> sc = OpenOne(name, options);
  if (!sc.ok()) return sc.status();
  collections_[name] = sc.value();
  return Status::OK();
}

Status CollectionManager::DeleteSnapshot(const std::string& name, const std::string& snapshot) {
  STRATA_RETURN_IF_ERROR(CheckName(name));
  if (!snapshot.ends_with(kSuffix) || snapshot.find('/') != std::string::npos) {
    return Status::InvalidArgument("'" + snapshot + "' is not a snapshot name");
  }
  std::error_code ec;
  if (!fs::remove(SnapshotDir(name) + "/" + snapshot, ec)) {
    return ec ? Status::IOError("remove " + snapshot + ": " + ec.message())
              : Status::NotFound("snapshot " + snapshot + " of collection " + name + " not found");
  }
  return Status::OK();
}

Reply SnapshotEndpoint(CollectionManager* manager, const std::string& method,
                       const std::string& name, const std::string& snapshot, const json& body) {
  auto info_json = [](const CollectionManager::SnapshotInfo& s) {
    return json{{"name", s.name},
                {"creation_time", s.creation_time.empty() ? json(nullptr) : json(s.creation_time)},
                {"size", s.size},
                {"checksum", nullptr}};
  };
  if (method == "POST") {
    Result<CollectionManager::SnapshotInfo> s = manager->CreateSnapshot(name);
    if (!s.ok()) return ErrorReply(HttpStatusOf(s.status()), s.status().message());
    return Reply{200, OkBody(info_json(s.value()), 0).dump()};
  }
  if (method == "GET") {
    Result<std::vector<CollectionManager::SnapshotInfo>> list = manager->ListSnapshots(name);
    if (!list.ok()) return ErrorReply(HttpStatusOf(list.status()), list.status().message());
    json out = json::array();
    for (const auto& s : list.value()) out.push_back(info_json(s));
    return Reply{200, OkBody(out, 0).dump()};
  }
  if (method == "DELETE") {
    Status st = manager->DeleteSnapshot(name, snapshot);
    if (!st.ok()) return ErrorReply(HttpStatusOf(st), st.message());
    return Reply{200, OkBody(true, 0).dump()};
  }
  // PUT .../snapshots/recover
  const json& location = body.value("location", json());
  if (!location.is_string()) {
    return ErrorReply(400, "expected {\"location\": \"file:///...\" or a snapshot name}");
  }
  Status st = manager->RecoverSnapshot(name, location.get<std::string>());
  if (!st.ok()) return ErrorReply(HttpStatusOf(st), st.message());
  return Reply{200, OkBody(true, 0).dump()};
}

}  // namespace strata::server
