// PageWriter: aligned random page writes with explicit fsync.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "strata/io.h"

namespace strata {

Result<PageWriter> PageWriter::Open(const std::string& path, const PageWriterOptions& options) {
  bool direct = options.use_direct_io;
  const int base = O_RDWR | O_CLOEXEC | (options.create_if_missing ? O_CREAT : 0);
  int fd;
  while (true) {
    fd = ::open(path.c_str(), base | (direct ? O_DIRECT : 0), 0644);
    if (fd >= 0) break;
    const int err = errno;
    if (err == EINTR) continue;
    if (err == EINVAL && direct) {  // no O_DIRECT on this filesystem: go buffered
      direct = false;
      continue;
    }
    if (err == ENOENT) {
      return Status::NotFound(fmt::format("{}: {}", path,
                                          options.create_if_missing
                                              ? "cannot create: the directory does not exist"
                                              : "no such file"));
    }
    return Status::FromErrno(fmt::format("open {} for writing", path), err);
  }
  PageWriter w;
  w.fd_ = fd;
  w.direct_ = direct;
  w.path_ = path;
  return w;
}

PageWriter::PageWriter(PageWriter&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), direct_(other.direct_), path_(std::move(other.path_)) {}

PageWriter& PageWriter::operator=(PageWriter&& other) noexcept {
  if (this != &other) {
    Close().IgnoreError();
    fd_ = std::exchange(other.fd_, -1);
    direct_ = other.direct_;
    path_ = std::move(other.path_);
  }
  return *this;
}

PageWriter::~PageWriter() { Close().IgnoreError(); }

Status PageWriter::WriteAt(std::uint64_t offset, std::span<const std::byte> data) {
  if (fd_ < 0) return Status::InvalidArgument("PageWriter::WriteAt: file is not open");
  if (offset % kIoAlignment != 0 || data.empty() || data.size() % kIoAlignment != 0 ||
      reinterpret_cast<std::uintptr_t>(data.data()) % kIoAlignment != 0) {
    return Status::InvalidArgument(fmt::format(
        "PageWriter::WriteAt {}: offset {}, length {} and buffer address must be multiples of {}",
        path_, offset, data.size(), kIoAlignment));
  }
  while (true) {
    const ssize_t n = ::pwrite(fd_, data.data(), data.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::FromErrno(
          fmt::format("write of {} bytes at offset {} of {}", data.size(), offset, path_), errno);
    }
    if (static_cast<std::size_t>(n) != data.size()) {
      return Status::IOError(fmt::format(
          "short write: {} of {} bytes at offset {} of {} (disk full or file size limit?)", n,
          data.size(), offset, path_));
    }
    return Status::OK();
  }
}

Status PageWriter::Sync() {
  if (fd_ < 0) return Status::InvalidArgument("PageWriter::Sync: file is not open");
  if (::fsync(fd_) != 0) return Status::FromErrno(fmt::format("fsync {}", path_), errno);
  return Status::OK();
}

Result<std::uint64_t> PageWriter::Size() const {
  if (fd_ < 0) return Status::InvalidArgument("PageWriter::Size: file is not open");
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Status::FromErrno(fmt::format("fstat {}", path_), errno);
  return static_cast<std::uint64_t>(st.st_size);
}

Status PageWriter::Close() {
  if (fd_ < 0) return Status::OK();
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && errno != EINTR) {
    return Status::FromErrno(fmt::format("close {}", path_), errno);
  }
  return Status::OK();
}

}  // namespace strata
