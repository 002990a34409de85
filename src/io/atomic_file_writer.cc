// AtomicFileWriter: whole-file writes that are all-or-nothing on disk.
//
// Sequence on Commit: write the staged tail padded to a block (O_DIRECT needs
// aligned lengths), ftruncate to the exact length, fsync the file, close,
// rename over the destination (atomic on POSIX filesystems), fsync the
// directory so the rename itself survives a crash. A reader of `path` thus
// sees the old file or the complete new one, never a prefix.
#include "io/fault_injection.h"
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "strata/io.h"

namespace strata {
namespace {

std::string DirName(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno(fmt::format("open directory {}", dir), errno);
  const int ret = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (ret != 0) return Status::FromErrno(fmt::format("fsync directory {}", dir), err);
  return Status::OK();
}

}  // namespace

Status AtomicFileWriterOptions::Validate() const {
  if (buffer_size < kIoAlignment || buffer_size > (std::size_t{256} << 20) ||
      buffer_size % kIoAlignment != 0) {
    return Status::InvalidArgument(fmt::format(
        "AtomicFileWriterOptions.buffer_size must be a multiple of {} in 4 KiB..256 MiB, got {}",
        kIoAlignment, buffer_size));
  }
  return Status::OK();
}

Result<AtomicFileWriter> AtomicFileWriter::Create(const std::string& path,
                                                  const AtomicFileWriterOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (path.empty() || path.back() == '/') {
    return Status::InvalidArgument(fmt::format("AtomicFileWriter: bad file path '{}'", path));
  }
  AtomicFileWriter w;
  w.path_ = path;
  // Unique per process and call; O_EXCL guards against anything left over.
  static std::atomic<std::uint64_t> counter{0};
  bool direct = options.use_direct_io;
  for (int attempt = 0; attempt < 100 && w.fd_ < 0; ++attempt) {
    w.temp_path_ = fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter.fetch_add(1));
    const int flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | (direct ? O_DIRECT : 0);
    w.fd_ = ::open(w.temp_path_.c_str(), flags, 0644);
    if (w.fd_ >= 0) break;
    const int err = errno;
    if (err == EEXIST || err == EINTR) continue;
    if (err == EINVAL && direct) {
      // The filesystem rejects O_DIRECT; it may have created the (new,
      // uniquely named) file before refusing, so remove it and go buffered.
      ::unlink(w.temp_path_.c_str());
      direct = false;
      continue;
    }
    return Status::FromErrno(fmt::format("create {}", w.temp_path_), err);
  }
  if (w.fd_ < 0) {
    return Status::IOError(fmt::format("create a temporary file next to {}: no free name", path));
  }
  w.temp_exists_ = true;
  w.direct_ = direct;
  void* stage = std::aligned_alloc(kIoAlignment, options.buffer_size);
  if (stage == nullptr) {
    return Status::IOError(
        fmt::format("AtomicFileWriter: cannot allocate {} bytes", options.buffer_size));
  }
  w.stage_.reset(static_cast<std::byte*>(stage));
  w.stage_capacity_ = options.buffer_size;
  return w;
}

AtomicFileWriter::AtomicFileWriter(AtomicFileWriter&& other) noexcept { *this = std::move(other); }

AtomicFileWriter& AtomicFileWriter::operator=(AtomicFileWriter&& other) noexcept {
  if (this != &other) {
    Abort();
    path_ = std::move(other.path_);
    temp_path_ = std::move(other.temp_path_);
    fd_ = std::exchange(other.fd_, -1);
    temp_exists_ = std::exchange(other.temp_exists_, false);
    direct_ = other.direct_;
    committed_ = std::exchange(other.committed_, false);
    error_ = std::move(other.error_);
    stage_ = std::move(other.stage_);
    stage_capacity_ = std::exchange(other.stage_capacity_, 0);
    stage_used_ = std::exchange(other.stage_used_, 0);
    file_offset_ = std::exchange(other.file_offset_, 0);
    logical_size_ = std::exchange(other.logical_size_, 0);
  }
  return *this;
}

AtomicFileWriter::~AtomicFileWriter() { Abort(); }

Status AtomicFileWriter::Fail(Status status) {
  if (error_.ok()) error_ = std::move(status);
  return error_;
}

Status AtomicFileWriter::WriteChunk(const std::byte* data, std::size_t length) {
  while (true) {
    if (io::ShouldInjectFault(io::FaultPoint::kWrite)) {
      return Fail(Status::FromErrno(
          fmt::format("write of {} bytes at offset {} of {}", length, file_offset_, temp_path_),
          EIO));
    }
    const ssize_t n = ::pwrite(fd_, data, length, static_cast<off_t>(file_offset_));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Fail(Status::FromErrno(
          fmt::format("write of {} bytes at offset {} of {}", length, file_offset_, temp_path_),
          errno));
    }
    if (static_cast<std::size_t>(n) != length) {
      // Retrying could only end in ENOSPC/EFBIG; the short write is the error.
      return Fail(Status::IOError(fmt::format(
          "short write: {} of {} bytes at offset {} of {} (disk full or file size limit?)", n,
          length, file_offset_, temp_path_)));
    }
    file_offset_ += length;
    return Status::OK();
  }
}

Status AtomicFileWriter::Append(std::span<const std::byte> data) {
  if (!error_.ok()) return error_;
  if (committed_ || fd_ < 0) {
    return Status::InvalidArgument(fmt::format("AtomicFileWriter {}: already closed", path_));
  }
  while (!data.empty()) {
    const std::size_t n = std::min(data.size(), stage_capacity_ - stage_used_);
    std::memcpy(stage_.get() + stage_used_, data.data(), n);
    stage_used_ += n;
    logical_size_ += n;
    data = data.subspan(n);
    if (stage_used_ == stage_capacity_) {
      STRATA_RETURN_IF_ERROR(WriteChunk(stage_.get(), stage_used_));
      stage_used_ = 0;
    }
  }
  return Status::OK();
}

Status AtomicFileWriter::Commit() {
  if (!error_.ok()) return error_;
  if (committed_) return Status::OK();
  if (fd_ < 0) return Status::InvalidArgument(fmt::format("AtomicFileWriter {}: aborted", path_));
  if (stage_used_ > 0) {
    const std::size_t padded = (stage_used_ + kIoAlignment - 1) / kIoAlignment * kIoAlignment;
    std::memset(stage_.get() + stage_used_, 0, padded - stage_used_);
    STRATA_RETURN_IF_ERROR(WriteChunk(stage_.get(), padded));
    stage_used_ = 0;
  }
  if (file_offset_ != logical_size_ && ::ftruncate(fd_, static_cast<off_t>(logical_size_)) != 0) {
    return Fail(Status::FromErrno(fmt::format("truncate {}", temp_path_), errno));
  }
  if (io::ShouldInjectFault(io::FaultPoint::kFsync)) {
    return Fail(Status::FromErrno(fmt::format("fsync {}", temp_path_), EIO));
  }
  if (::fsync(fd_) != 0) return Fail(Status::FromErrno(fmt::format("fsync {}", temp_path_), errno));
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && errno != EINTR) {
    return Fail(Status::FromErrno(fmt::format("close {}", temp_path_), errno));
  }
  if (io::ShouldInjectFault(io::FaultPoint::kRename)) {
    return Fail(Status::FromErrno(fmt::format("rename {} to {}", temp_path_, path_), EIO));
  }
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Fail(Status::FromErrno(fmt::format("rename {} to {}", temp_path_, path_), errno));
  }
  temp_exists_ = false;
  committed_ = true;
  // The file is in place; if the directory cannot be synced the rename may
  // not survive a crash, which the caller must hear about.
  return SyncDirectory(DirName(path_));
}

void AtomicFileWriter::Abort() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  if (temp_exists_) {
    ::unlink(temp_path_.c_str());
    temp_exists_ = false;
  }
}

}  // namespace strata
