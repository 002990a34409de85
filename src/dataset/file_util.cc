#include "dataset/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

namespace strata::dataset_internal {

InputFile::InputFile(InputFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), size_(other.size_) {}

InputFile& InputFile::operator=(InputFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
  }
  return *this;
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<InputFile> InputFile::Open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path + ": no such file");
    return Status::FromErrno(path + ": cannot open", err);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::FromErrno(path + ": fstat failed", err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": not a regular file");
  }
  InputFile file;
  file.fd_ = fd;
  file.path_ = path;
  file.size_ = static_cast<std::uint64_t>(st.st_size);
  return file;
}

Status InputFile::ReadAt(std::uint64_t offset, std::size_t size, void* out) const {
  return PreadFull(fd_, path_, offset, size, out);
}

int InputFile::Release() { return std::exchange(fd_, -1); }

Status PreadFull(int fd, const std::string& path, std::uint64_t offset, std::size_t size,
                 void* out) {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    // Linux caps one transfer at ~2 GiB; chunk so huge ranges still work.
    const std::size_t chunk = std::min<std::size_t>(size, std::size_t{1} << 30);
    const ssize_t got = ::pread(fd, p, chunk, static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(path + ": read failed at offset " + std::to_string(offset), errno);
    }
    if (got == 0) {
      // The size was validated at open; reaching EOF means the file shrank.
      return Status::Corruption(path + ": unexpected end of file at offset " +
                                std::to_string(offset) + " (file truncated while open?)");
    }
    p += got;
    offset += static_cast<std::uint64_t>(got);
    size -= static_cast<std::size_t>(got);
  }
  return Status::OK();
}

Status WriteFull(int fd, const std::string& path, const void* data, std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const std::size_t chunk = std::min<std::size_t>(size, std::size_t{1} << 30);
    const ssize_t put = ::write(fd, p, chunk);
    if (put < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(path + ": write failed", errno);
    }
    p += put;
    size -= static_cast<std::size_t>(put);
  }
  return Status::OK();
}

Status PwriteFull(int fd, const std::string& path, std::uint64_t offset, const void* data,
                  std::size_t size) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t put = ::pwrite(fd, p, size, static_cast<off_t>(offset));
    if (put < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(path + ": write failed at offset " + std::to_string(offset), errno);
    }
    p += put;
    offset += static_cast<std::uint64_t>(put);
    size -= static_cast<std::size_t>(put);
  }
  return Status::OK();
}

Result<int> CreateTempFor(const std::string& path, std::string* temp_path) {
  // pid + process-wide counter makes names unique among concurrent writers;
  // O_EXCL guards against leftovers from a crashed process with a reused pid.
  static std::atomic<std::uint64_t> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                       std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    const int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *temp_path = std::move(name);
      return fd;
    }
    if (errno != EEXIST) {
      return Status::FromErrno(path + ": cannot create temporary file " + name, errno);
    }
  }
  return Status::IOError(path + ": cannot find a free temporary file name");
}

namespace {

std::string DirectoryOf(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

Status CommitTemp(int fd, const std::string& temp_path, const std::string& final_path, bool sync) {
  if (sync && ::fsync(fd) != 0) {
    const int err = errno;
    DiscardTemp(fd, temp_path);
    return Status::FromErrno(final_path + ": fsync failed", err);
  }
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(temp_path.c_str());
    return Status::FromErrno(final_path + ": close failed", err);
  }
  if (::rename(temp_path.c_str(), final_path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp_path.c_str());
    return Status::FromErrno(final_path + ": cannot rename " + temp_path + " into place", err);
  }
  if (sync) {
    // The rename is durable only once the directory entry is on disk.
    const std::string dir = DirectoryOf(final_path);
    const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return Status::FromErrno(final_path + ": cannot open directory " + dir, errno);
    const int rc = ::fsync(dfd);
    const int err = errno;
    ::close(dfd);
    if (rc != 0) return Status::FromErrno(final_path + ": fsync of directory failed", err);
  }
  return Status::OK();
}

void DiscardTemp(int fd, const std::string& temp_path) {
  if (fd >= 0) ::close(fd);
  if (!temp_path.empty()) ::unlink(temp_path.c_str());
}

Status CorruptionAt(std::string_view path, std::string_view message) {
  return Status::Corruption(std::string(path) + ": " + std::string(message));
}
Status InvalidArgumentAt(std::string_view path, std::string_view message) {
  return Status::InvalidArgument(std::string(path) + ": " + std::string(message));
}
Status NotSupportedAt(std::string_view path, std::string_view message) {
  return Status::NotSupported(std::string(path) + ": " + std::string(message));
}

std::uint32_t LoadU32(const void* p) {
  const auto* b = static_cast<const unsigned char*>(p);
  return static_cast<std::uint32_t>(b[0]) | (static_cast<std::uint32_t>(b[1]) << 8) |
         (static_cast<std::uint32_t>(b[2]) << 16) | (static_cast<std::uint32_t>(b[3]) << 24);
}

std::int32_t LoadI32(const void* p) { return static_cast<std::int32_t>(LoadU32(p)); }

void StoreU32(void* p, std::uint32_t v) {
  auto* b = static_cast<unsigned char*>(p);
  b[0] = static_cast<unsigned char>(v);
  b[1] = static_cast<unsigned char>(v >> 8);
  b[2] = static_cast<unsigned char>(v >> 16);
  b[3] = static_cast<unsigned char>(v >> 24);
}

}  // namespace strata::dataset_internal
