#include "index/build_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "format/manifest.h"
#include "kernels/distance.h"
#include "strata/dataset.h"

namespace strata {

Result<BuildRows> LoadBuildRows(const std::string& base_path, const std::string& what) {
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(base_path));
  BuildRows out;
  out.type = reader->element_type();
  out.dim = reader->dim();
  out.n = reader->rows();
  if (out.n == 0) return Status::InvalidArgument(base_path + ": no vectors");
  if (out.n >= 0xFFFFFFFFull) {
    return Status::NotSupported(what + ": more than 2^32 - 2 vectors in one shard");
  }
  STRATA_ASSIGN_OR_RETURN(out.matrix, reader->ReadAllAsFloat());
  return out;
}

namespace {

// A staging directory whose lock is free is stale once the process named in
// it is gone, or after this long: a pid may be reused, or belong to another
// pid namespace sharing the file system. The age also covers the instant
// between a live build's mkdir and its flock.
constexpr std::int64_t kStaleStagingSeconds = 600;

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Parent directory and last component of a path without trailing slashes.
std::pair<std::string, std::string> SplitPath(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

Status SyncPath(const std::string& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) return Status::FromErrno("open " + path, errno);
  const int ret = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (ret != 0) return Status::FromErrno("fsync " + path, err);
  return Status::OK();
}

// Names of the entries of `dir` (no "." or ".."); IOError if it cannot be read.
Result<std::vector<std::string>> ListDirectory(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Status::FromErrno("opendir " + dir, errno);
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Where an index directory is and where its staging directories go.
struct IndexLocation {
  std::string dir;             // the index directory, symbolic links resolved
  std::string staging_parent;  // the directory holding staging directories
  std::string staging_prefix;  // their names up to "<pid>-<counter>"
};

Result<IndexLocation> Locate(const std::string& index_dir) {
  if (index_dir.empty()) return Status::InvalidArgument("empty index directory path");
  std::string dir = index_dir;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const Status not_dir = Status::InvalidArgument(index_dir + " exists and is not a directory");
  struct stat st;
  bool exists = false;
  if (::lstat(dir.c_str(), &st) == 0) {
    exists = true;
    // A link is replaced through (renaming would replace the link itself), and
    // "." or ".." cannot be renamed: both resolve to the real directory.
    const std::string last = SplitPath(dir).second;
    if (S_ISLNK(st.st_mode) || last == "." || last == "..") {
      char* real = ::realpath(dir.c_str(), nullptr);
      if (real == nullptr) return not_dir;  // a dangling link
      dir = real;
      std::free(real);
      if (::stat(dir.c_str(), &st) != 0) return Status::FromErrno("stat " + dir, errno);
    }
    if (!S_ISDIR(st.st_mode)) return not_dir;
    if (dir == "/") return Status::InvalidArgument("cannot build an index into /");
  } else if (errno != ENOENT) {
    return Status::FromErrno("stat " + index_dir, errno);
  }
  const auto [parent, name] = SplitPath(dir);
  struct stat pst;
  if (::stat(parent.c_str(), &pst) != 0) return Status::FromErrno("stat " + parent, errno);
  IndexLocation loc;
  loc.dir = dir;
  if (exists && pst.st_dev != st.st_dev) {
    // A mount point: nothing beside it can be renamed onto it, so stage inside.
    loc.staging_parent = dir;
    loc.staging_prefix = ".strata.staging-";
  } else {
    loc.staging_parent = parent;
    loc.staging_prefix = name + ".staging-";
  }
  return loc;
}

// Removes staging directories a crashed build left: "<prefix><pid>-<n>"
// exactly, a real directory, its lock free, and its process gone or the
// directory old. Anything else is left alone; failures are ignored (the next
// build tries again).
void RemoveStaleStaging(const IndexLocation& loc) {
  auto names = ListDirectory(loc.staging_parent);
  if (!names.ok()) return;
  const std::int64_t now = static_cast<std::int64_t>(std::time(nullptr));
  for (const std::string& name : *names) {
    if (name.rfind(loc.staging_prefix, 0) != 0) continue;
    const std::string rest = name.substr(loc.staging_prefix.size());
    const std::size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || dash + 1 == rest.size() ||
        rest.find_first_not_of("0123456789-") != std::string::npos ||
        rest.find('-', dash + 1) != std::string::npos) {
      continue;
    }
    const std::string path = JoinPath(loc.staging_parent, name);
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) {
      const unsigned long long pid = std::strtoull(rest.substr(0, dash).c_str(), nullptr, 10);
      const bool alive =
          pid <= static_cast<unsigned long long>(std::numeric_limits<pid_t>::max()) &&
          (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
      if (!alive || now - static_cast<std::int64_t>(st.st_mtime) >= kStaleStagingSeconds) {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
      }
    }
    ::close(fd);
  }
}

// Whether `dir` holds only files of an index: regular files named in
// `staged` (the new index), by the previous manifest, the manifest itself,
// or an atomic writer's temporary of one of those. Only then may the whole
// directory be swapped out and deleted.
bool HoldsOnlyIndexFiles(const std::string& dir, const std::vector<std::string>& staged) {
  std::set<std::string> known(staged.begin(), staged.end());
  known.insert(format::kManifestName);
  if (auto old = format::ReadManifest(dir); old.ok()) {
    for (const format::ManifestFile& f : old->files) known.insert(f.name);
  }
  auto names = ListDirectory(dir);
  if (!names.ok()) return false;
  for (const std::string& name : *names) {
    if (!IsRegularFile(JoinPath(dir, name))) return false;
    const std::size_t tmp = name.find(".tmp.");
    if (!known.contains(name) &&
        (tmp == std::string::npos || !known.contains(name.substr(0, tmp)))) {
      return false;
    }
  }
  return true;
}

// renameat2(RENAME_EXCHANGE) through syscall(): older glibc has no wrapper.
// -1 with errno ENOSYS where the kernel or platform has none.
int ExchangePaths(const std::string& a, const std::string& b) {
#if defined(__linux__) && defined(SYS_renameat2)
  constexpr unsigned kRenameExchange = 1u << 1;  // RENAME_EXCHANGE in <linux/fs.h>
  return static_cast<int>(
      ::syscall(SYS_renameat2, AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), kRenameExchange));
#else
  errno = ENOSYS;
  return -1;
#endif
}

// The switch where the directory cannot be swapped: the new files are
// renamed into `dir` one by one. The old manifest goes first and the new one
// comes last, so that `dir` never claims to be a mixed index.
Status MoveFilesIn(const std::string& staging, const std::string& dir,
                   const std::vector<std::string>& staged) {
  struct stat a, b;
  if (::stat(staging.c_str(), &a) != 0) return Status::FromErrno("stat " + staging, errno);
  if (::stat(dir.c_str(), &b) != 0) return Status::FromErrno("stat " + dir, errno);
  if (a.st_dev != b.st_dev) {
    // Checked before anything is touched: a rename across devices would fail
    // only after the old manifest is gone.
    return Status::IOError(staging + " and " + dir + " are on different file systems");
  }
  const std::string manifest = JoinPath(dir, format::kManifestName);
  if (::unlink(manifest.c_str()) != 0 && errno != ENOENT) {
    return Status::FromErrno("unlink " + manifest, errno);
  }
  STRATA_RETURN_IF_ERROR(SyncPath(dir, true));
  bool has_manifest = false;
  for (const std::string& name : staged) {
    if (name == format::kManifestName) {
      has_manifest = true;
      continue;
    }
    if (::rename(JoinPath(staging, name).c_str(), JoinPath(dir, name).c_str()) != 0) {
      return Status::FromErrno("rename " + JoinPath(staging, name), errno);
    }
  }
  STRATA_RETURN_IF_ERROR(SyncPath(dir, true));  // the data files before the manifest
  if (has_manifest &&
      ::rename(JoinPath(staging, format::kManifestName).c_str(), manifest.c_str()) != 0) {
    return Status::FromErrno("rename " + JoinPath(staging, format::kManifestName), errno);
  }
  return SyncPath(dir, true);
}

// Puts the complete staged index in place of `loc.dir` (see BuildAside).
Status SwitchIn(const IndexLocation& loc, const std::string& staging,
                const std::vector<std::string>& staged) {
  const std::string parent = SplitPath(loc.dir).first;
  struct stat st;
  const bool same_parent = loc.staging_parent == parent;
  if (same_parent && ::lstat(loc.dir.c_str(), &st) != 0 && errno == ENOENT) {
    if (::rename(staging.c_str(), loc.dir.c_str()) == 0) return SyncPath(parent, true);
    // Created meanwhile: replace it like an existing one below.
    if (errno != EEXIST && errno != ENOTEMPTY) {
      return Status::FromErrno("rename " + staging + " to " + loc.dir, errno);
    }
  }
  if (same_parent && HoldsOnlyIndexFiles(loc.dir, staged)) {
    if (ExchangePaths(staging, loc.dir) == 0) {
      // The old index now has the staging name; the caller deletes it.
      return SyncPath(parent, true);
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP && errno != EOPNOTSUPP &&
        errno != EXDEV) {
      return Status::FromErrno("renameat2 exchange " + staging + " with " + loc.dir, errno);
    }
  }
  return MoveFilesIn(staging, loc.dir, staged);
}

}  // namespace

Status BuildAside(const std::string& index_dir,
                  const std::function<Status(const std::string& staging_dir)>& write) {
  STRATA_ASSIGN_OR_RETURN(const IndexLocation loc, Locate(index_dir));
  RemoveStaleStaging(loc);
  // Unique within the process (the pid makes it unique across processes).
  static std::atomic<std::uint64_t> counter{0};
  const std::string staging =
      JoinPath(loc.staging_parent, loc.staging_prefix + std::to_string(::getpid()) + "-" +
                                       std::to_string(counter.fetch_add(1)));
  if (::mkdir(staging.c_str(), 0755) != 0) return Status::FromErrno("mkdir " + staging, errno);
  // Held to the end: tells another build's stale sweep this one is live. A
  // file system without flock only loses that signal (the age rule remains).
  const int lock_fd = ::open(staging.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd >= 0) (void)::flock(lock_fd, LOCK_EX);
  Status s = write(staging);
  std::vector<std::string> staged;
  if (s.ok()) {
    // The writers fsync what they write; this covers any file that did not.
    auto names = ListDirectory(staging);
    if (names.ok()) {
      staged = std::move(*names);
      for (const std::string& name : staged) {
        if (!s.ok()) break;
        if (IsRegularFile(JoinPath(staging, name))) s = SyncPath(JoinPath(staging, name), false);
      }
      if (s.ok()) s = SyncPath(staging, true);
    } else {
      s = names.status();
    }
  }
  if (s.ok()) s = SwitchIn(loc, staging, staged);
  // Whatever has the staging name now goes: the new index after a failure,
  // the old one after a swap, an emptied directory after the one-by-one
  // renames; nothing after a first build's rename.
  std::error_code ec;
  std::filesystem::remove_all(staging, ec);
  if (lock_fd >= 0) ::close(lock_fd);
  return s;
}

Status CheckMergeInputs(const format::Manifest& m, Metric options_metric, std::size_t deleted_flags,
                        std::size_t new_values) {
  if (m.metric != options_metric) {
    return Status::InvalidArgument("merge: the index's metric is " +
                                   std::string(MetricName(m.metric)) + ", options say " +
                                   std::string(MetricName(options_metric)));
  }
  if (deleted_flags != m.num_vectors) {
    return Status::InvalidArgument("merge: " + std::to_string(deleted_flags) +
                                   " delete flags for " + std::to_string(m.num_vectors) + " rows");
  }
  if (m.dim == 0 || new_values % m.dim != 0) {
    return Status::InvalidArgument("merge: new rows are not a whole number of dim " +
                                   std::to_string(m.dim) + " vectors");
  }
  return Status::OK();
}

Status NormalizeRowsForCosine(float* rows, std::uint64_t n, std::uint32_t dim,
                              const std::string& path) {
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!kernels::NormalizeInPlace(rows + i * dim, dim)) {
      return Status::InvalidArgument(path + ": row " + std::to_string(i) +
                                     " is a zero vector, which has no cosine distance");
    }
  }
  return Status::OK();
}

void WidenToFloat(ElementType type, const void* in, std::size_t dim, float* out) {
  switch (type) {
    case ElementType::kFloat32:
      std::memcpy(out, in, dim * sizeof(float));
      break;
    case ElementType::kFloat16:
      kernels::HalfToFloatN(static_cast<const std::uint16_t*>(in), out, dim);
      break;
    case ElementType::kBFloat16:
      kernels::BFloat16ToFloatN(static_cast<const std::uint16_t*>(in), out, dim);
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < dim; ++i) out[i] = static_cast<const std::uint8_t*>(in)[i];
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < dim; ++i) out[i] = static_cast<const std::int8_t*>(in)[i];
      break;
  }
}

void StoreVector(ElementType type, const float* row, std::size_t dim, std::byte* out) {
  switch (type) {
    case ElementType::kFloat32:
      std::memcpy(out, row, dim * sizeof(float));
      break;
    case ElementType::kFloat16:
      kernels::FloatToHalfN(row, reinterpret_cast<std::uint16_t*>(out), dim);
      break;
    case ElementType::kBFloat16:
      kernels::FloatToBFloat16N(row, reinterpret_cast<std::uint16_t*>(out), dim);
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < dim; ++i) {
        reinterpret_cast<std::uint8_t*>(out)[i] = static_cast<std::uint8_t>(std::lrint(row[i]));
      }
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < dim; ++i) {
        reinterpret_cast<std::int8_t*>(out)[i] = static_cast<std::int8_t>(std::lrint(row[i]));
      }
      break;
  }
}

}  // namespace strata
