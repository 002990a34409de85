// IoQueue's engine-independent half: request validation, file slots, the
// in-flight count, counters, and requests completed at submit time. Backends
// only move requests to and from the kernel (or their worker threads).
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/timer.h"
#include "strata/io.h"

namespace strata {
namespace {

bool Aligned(std::uint64_t v) { return v % kIoAlignment == 0; }

std::string_view OpName(IoOp op) { return op == IoOp::kRead ? "read" : "write"; }

}  // namespace

IoQueue::IoQueue(const IoQueueOptions& options)
    : depth_(options.queue_depth), files_(options.max_files) {
  // Sized once so that Finish() (called from pread workers) never races with
  // a reallocation, and CompleteNow() never allocates on the submit path.
  ready_.reserve(depth_);
}

IoQueue::~IoQueue() = default;

Result<IoFileId> IoQueue::AddFile(int fd, std::string_view name) {
  if (fd < 0) return Status::InvalidArgument(fmt::format("AddFile: invalid descriptor {}", fd));
  if (::fcntl(fd, F_GETFD) == -1) {
    const int err = errno;
    return Status::InvalidArgument(
        fmt::format("AddFile: descriptor {} ({}) is not open: {}", fd, name, std::strerror(err)));
  }
  auto it = std::find_if(files_.begin(), files_.end(), [](const FileSlot& s) { return s.fd < 0; });
  if (it == files_.end()) {
    return Status::Busy(
        fmt::format("AddFile: all {} file slots in use (IoQueueOptions.max_files)", files_.size()));
  }
  const auto id = static_cast<IoFileId>(it - files_.begin());
  STRATA_RETURN_IF_ERROR(DoAddFile(id, fd));
  it->fd = fd;
  it->in_flight = 0;
  it->name = name.empty() ? fmt::format("fd {}", fd) : std::string(name);
  return id;
}

Result<IoFileId> IoQueue::AddFile(const DirectFile& file) {
  if (!file.is_open()) return Status::InvalidArgument("AddFile: DirectFile is not open");
  return AddFile(file.fd(), file.path());
}

Status IoQueue::RemoveFile(IoFileId id) {
  if (id >= files_.size() || files_[id].fd < 0) {
    return Status::InvalidArgument(fmt::format("RemoveFile: unknown file id {}", id));
  }
  if (files_[id].in_flight > 0) {
    return Status::Busy(fmt::format("RemoveFile: {} requests on {} still in flight",
                                    files_[id].in_flight, files_[id].name));
  }
  STRATA_RETURN_IF_ERROR(DoRemoveFile(id));
  files_[id].fd = -1;
  files_[id].name.clear();
  return Status::OK();
}

Status IoQueue::RegisterBuffers(std::span<std::byte> region) {
  if (!region.empty() &&
      (!Aligned(reinterpret_cast<std::uintptr_t>(region.data())) || !Aligned(region.size()))) {
    return Status::InvalidArgument(
        fmt::format("RegisterBuffers: region of {} bytes at {} is not {}-byte aligned",
                    region.size(), static_cast<const void*>(region.data()), kIoAlignment));
  }
  if (in_flight_ > 0) {
    return Status::Busy(fmt::format("RegisterBuffers: {} requests in flight", in_flight_));
  }
  return DoRegisterBuffers(region);
}

Status IoQueue::ValidateRequest(std::size_t index, const IoRequest& r) const {
  auto bad = [&](std::string what) {
    return Status::InvalidArgument(fmt::format("IoRequest[{}]: {}", index, what));
  };
  if (r.op != IoOp::kRead && r.op != IoOp::kWrite) return bad("unknown op");
  if (r.file >= files_.size() || files_[r.file].fd < 0) {
    return bad(fmt::format("unknown file id {}", r.file));
  }
  if (!Aligned(r.offset)) {
    return bad(fmt::format("offset {} is not a multiple of {}", r.offset, kIoAlignment));
  }
  if (r.length == 0 || !Aligned(r.length) || r.length > IoRequest::kMaxIoLength) {
    return bad(fmt::format("length {} is not a positive multiple of {} up to {}", r.length,
                           kIoAlignment, IoRequest::kMaxIoLength));
  }
  if (r.buffer == nullptr || !Aligned(reinterpret_cast<std::uintptr_t>(r.buffer))) {
    return bad(fmt::format("buffer {} is not {}-byte aligned", static_cast<const void*>(r.buffer),
                           kIoAlignment));
  }
  return Status::OK();
}

Status IoQueue::Submit(std::span<IoRequest* const> requests) {
  if (requests.empty()) return Status::OK();
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == nullptr) {
      return Status::InvalidArgument(fmt::format("IoRequest[{}]: null pointer", i));
    }
    STRATA_RETURN_IF_ERROR(ValidateRequest(i, *requests[i]));
  }
  if (requests.size() > capacity()) {
    return Status::Busy(fmt::format("Submit: {} requests but only {} of queue depth {} free",
                                    requests.size(), capacity(), depth_));
  }
  for (IoRequest* r : requests) {
    r->bytes_transferred = 0;
    r->status = Status::OK();
  }
  STRATA_RETURN_IF_ERROR(DoSubmit(requests));
  in_flight_ += static_cast<std::uint32_t>(requests.size());
  stats_.max_in_flight = std::max(stats_.max_in_flight, in_flight_);
  ++stats_.submit_batches;
  for (const IoRequest* r : requests) {
    ++files_[r->file].in_flight;
    if (r->op == IoOp::kRead) {
      ++stats_.reads;
      stats_.bytes_read += r->length;
      stats_.pages_read += r->length / kIoAlignment;
    } else {
      ++stats_.writes;
      stats_.bytes_written += r->length;
      stats_.pages_written += r->length / kIoAlignment;
    }
  }
  return Status::OK();
}

std::size_t IoQueue::TakeReady(std::span<IoRequest*> out) {
  std::size_t n = 0;
  while (n < out.size() && ready_head_ < ready_.size()) out[n++] = ready_[ready_head_++];
  if (ready_head_ == ready_.size()) {
    ready_.clear();
    ready_head_ = 0;
  }
  return n;
}

void IoQueue::Reap(std::span<IoRequest*> done) {
  for (IoRequest* r : done) {
    --files_[r->file].in_flight;
    if (!r->status.ok()) ++stats_.errors;
  }
  in_flight_ -= static_cast<std::uint32_t>(done.size());
}

Result<std::size_t> IoQueue::Poll(std::span<IoRequest*> completed) {
  if (completed.empty() || in_flight_ == 0) return std::size_t{0};
  std::size_t n = TakeReady(completed);
  const std::size_t in_backend = in_flight_ - n - (ready_.size() - ready_head_);
  if (n < completed.size() && in_backend > 0) {
    Result<std::size_t> more = DoPoll(completed.subspan(n));
    if (!more.ok() && n == 0) return more.status();
    // With some requests already in hand, return those; the error recurs on
    // the next call.
    if (more.ok()) n += *more;
  }
  Reap(completed.first(n));
  return n;
}

Result<std::size_t> IoQueue::Wait(std::span<IoRequest*> completed, std::size_t min_completions,
                                  std::int64_t timeout_us) {
  min_completions = std::min({min_completions, completed.size(), std::size_t{in_flight_}});
  if (min_completions == 0) return Poll(completed);
  const std::int64_t start = NowNanos();
  std::size_t n = TakeReady(completed);
  const std::size_t in_backend = in_flight_ - n - (ready_.size() - ready_head_);
  if (n < min_completions && in_backend > 0) {
    const std::int64_t deadline = timeout_us < 0 ? -1 : start + timeout_us * 1000;
    Result<std::size_t> more =
        DoWait(completed.subspan(n), std::min(min_completions - n, in_backend), deadline);
    if (!more.ok() && n == 0) {
      stats_.wait_ns += static_cast<std::uint64_t>(NowNanos() - start);
      return more.status();
    }
    if (more.ok()) n += *more;
  }
  stats_.wait_ns += static_cast<std::uint64_t>(NowNanos() - start);
  Reap(completed.first(n));
  return n;
}

Status IoQueue::RunToCompletion(std::span<IoRequest* const> requests) {
  if (in_flight_ != 0) {
    return Status::Busy(
        fmt::format("RunToCompletion: {} unrelated requests already in flight", in_flight_));
  }
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (requests[i] == nullptr) {
      return Status::InvalidArgument(fmt::format("IoRequest[{}]: null pointer", i));
    }
    STRATA_RETURN_IF_ERROR(ValidateRequest(i, *requests[i]));
  }
  std::vector<IoRequest*> done(depth_);
  std::size_t next = 0;
  Status queue_error;
  while (next < requests.size() || in_flight_ > 0) {
    const std::size_t k = std::min<std::size_t>(capacity(), requests.size() - next);
    if (k > 0 && queue_error.ok()) {
      queue_error = Submit(requests.subspan(next, k));
      if (queue_error.ok()) next += k;
    }
    if (in_flight_ == 0) break;
    Result<std::size_t> got = Wait(done, 1);
    if (!got.ok()) return got.status();
  }
  if (!queue_error.ok()) return queue_error;
  for (const IoRequest* r : requests) {
    if (!r->status.ok()) return r->status;
  }
  return Status::OK();
}

IoStats IoQueue::ResetStats() {
  IoStats old = stats_;
  stats_ = IoStats{};
  stats_.max_in_flight = in_flight_;
  return old;
}

void IoQueue::CompleteNow(IoRequest* request, std::int64_t result) {
  Finish(request, result);
  if (ready_head_ > 0) {
    // Keep the live entries at the front so the reserved capacity suffices.
    ready_.erase(ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(ready_head_));
    ready_head_ = 0;
  }
  ready_.push_back(request);
}

void IoQueue::Finish(IoRequest* request, std::int64_t result) const {
  if (result >= static_cast<std::int64_t>(request->length)) {
    request->bytes_transferred = request->length;
    request->status = Status::OK();
    return;
  }
  const std::string& name = files_[request->file].name;
  if (result < 0) {
    request->bytes_transferred = 0;
    request->status =
        Status::FromErrno(fmt::format("{} of {} bytes at offset {} of {}", OpName(request->op),
                                      request->length, request->offset, name),
                          static_cast<int>(-result));
    return;
  }
  request->bytes_transferred = static_cast<std::uint32_t>(result);
  if (request->op == IoOp::kRead) {
    // O_DIRECT reads of regular files come back short only at end of file.
    request->status = Status::OutOfRange(
        fmt::format("read of {} bytes at offset {} of {} reached end of file after {} bytes",
                    request->length, request->offset, name, result));
  } else {
    request->status =
        Status::IOError(fmt::format("short write: {} of {} bytes at offset {} of {} (device full?)",
                                    result, request->length, request->offset, name));
  }
}

void IoQueue::DrainAll() {
  if (in_flight_ == 0) return;
  std::vector<IoRequest*> done(depth_);
  while (in_flight_ > 0) {
    Result<std::size_t> got = Wait(done, in_flight_);
    if (!got.ok()) break;  // the backend failed; nothing more will complete
  }
}

}  // namespace strata
