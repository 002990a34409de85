// DirectFile: an O_DIRECT descriptor with size and synchronous aligned reads.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "strata/io.h"

namespace strata {

Result<DirectFile> DirectFile::Open(const std::string& path, DirectFileMode mode) {
  const int access = mode == DirectFileMode::kRead ? O_RDONLY : O_RDWR;
  int fd;
  do {
    fd = ::open(path.c_str(), access | O_DIRECT | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(fmt::format("{}: no such file", path));
    if (err == EINVAL) {
      return Status::NotSupported(
          fmt::format("{}: the filesystem does not support O_DIRECT (open: EINVAL)", path));
    }
    return Status::FromErrno(fmt::format("open {} with O_DIRECT", path), err);
  }
  return DirectFile(fd, path);
}

DirectFile::DirectFile(DirectFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)) {}

DirectFile& DirectFile::operator=(DirectFile&& other) noexcept {
  if (this != &other) {
    Close().IgnoreError();  // nothing to report to in a move
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
  }
  return *this;
}

DirectFile::~DirectFile() { Close().IgnoreError(); }

Result<std::uint64_t> DirectFile::Size() const {
  if (fd_ < 0) return Status::InvalidArgument("DirectFile::Size: file is not open");
  struct stat st;
  if (::fstat(fd_, &st) != 0) return Status::FromErrno(fmt::format("fstat {}", path_), errno);
  return static_cast<std::uint64_t>(st.st_size);
}

Status DirectFile::ReadAt(std::uint64_t offset, std::span<std::byte> buffer) const {
  if (fd_ < 0) return Status::InvalidArgument("DirectFile::ReadAt: file is not open");
  if (offset % kIoAlignment != 0 || buffer.empty() || buffer.size() % kIoAlignment != 0 ||
      reinterpret_cast<std::uintptr_t>(buffer.data()) % kIoAlignment != 0) {
    return Status::InvalidArgument(fmt::format(
        "DirectFile::ReadAt {}: offset {}, length {} and buffer address must be multiples of {}",
        path_, offset, buffer.size(), kIoAlignment));
  }
  std::size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t n =
        ::pread(fd_, buffer.data() + done, buffer.size() - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::FromErrno(
          fmt::format("read of {} bytes at offset {} of {}", buffer.size(), offset, path_), errno);
    }
    if (n == 0) {
      return Status::OutOfRange(
          fmt::format("read of {} bytes at offset {} of {} reached end of file after {} bytes",
                      buffer.size(), offset, path_, done));
    }
    done += static_cast<std::size_t>(n);
    // A short O_DIRECT read ends at EOF, which is not block aligned only for
    // the file's last block; the next pread then returns 0 or fails.
    if (done % kIoAlignment != 0 && done < buffer.size()) {
      return Status::OutOfRange(
          fmt::format("read of {} bytes at offset {} of {} reached end of file after {} bytes",
                      buffer.size(), offset, path_, done));
    }
  }
  return Status::OK();
}

Status DirectFile::Close() {
  if (fd_ < 0) return Status::OK();
  const int fd = std::exchange(fd_, -1);
  // close() must not be retried on EINTR on Linux: the descriptor is gone.
  if (::close(fd) != 0 && errno != EINTR) {
    return Status::FromErrno(fmt::format("close {}", path_), errno);
  }
  return Status::OK();
}

}  // namespace strata
