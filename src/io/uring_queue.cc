// io_uring backend: one ring per queue, submission batched into a single
// io_uring_enter, completions peeked from the shared CQ ring without a system
// call, blocking waits inside the kernel (io_uring_wait_cqe*), never spinning.
//
// Files go into the ring's registered-file table (IOSQE_FIXED_FILE skips the
// per-request fget/fput) and buffers from RegisterBuffers() are pinned once so
// that READ_FIXED skips the per-request page pinning. Both degrade to plain
// descriptors / plain reads when the kernel refuses, reported by Describe().
#include <fmt/format.h>
#include <liburing.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "base/timer.h"
#include "io/backends.h"

namespace strata::io_internal {
namespace {

// The kernel caps one registered buffer (iovec) at 1 GiB.
constexpr std::size_t kMaxFixedBuffer = std::size_t{1} << 30;

class UringQueue final : public IoQueue {
 public:
  explicit UringQueue(const IoQueueOptions& options) : IoQueue(options), options_(options) {}

  ~UringQueue() override {
    if (!initialised_) return;
    DrainAll();
    io_uring_queue_exit(&ring_);  // also drops registered files and buffers
  }

  Status Init() {
    // COOP_TASKRUN: completions are posted when this task next enters the
    // kernel instead of by interrupting it (cheaper; we enter for every batch
    // anyway). TASKRUN_FLAG tells a non-blocking Poll() that such work is
    // pending. Older kernels reject the flags: retry without them.
    io_uring_params params{};
    params.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_TASKRUN_FLAG;
    int ret = io_uring_queue_init_params(options_.queue_depth, &ring_, &params);
    if (ret == -EINVAL) {
      params = io_uring_params{};
      ret = io_uring_queue_init_params(options_.queue_depth, &ring_, &params);
    }
    if (ret < 0) {
      return Status::NotSupported(
          fmt::format("io_uring unavailable: io_uring_queue_init: {}", std::strerror(-ret)));
    }
    initialised_ = true;
    coop_taskrun_ = (params.flags & IORING_SETUP_TASKRUN_FLAG) != 0;
    cqes_.resize(options_.queue_depth);
    if (options_.register_files) {
      files_registered_ = io_uring_register_files_sparse(&ring_, options_.max_files) == 0;
    }
    return Status::OK();
  }

  IoEngine engine() const override { return IoEngine::kUring; }

  std::string Describe() const override {
    std::string s = fmt::format("uring(depth={}", queue_depth());
    s += files_registered_ ? ", registered files" : ", plain fds";
    if (buffers_registered_) {
      s += ", registered buffers";
    } else if (buffer_note_.empty()) {
      s += ", plain buffers";
    } else {
      s += ", plain buffers: " + buffer_note_;
    }
    if (coop_taskrun_) s += ", coop taskrun";
    return s + ")";
  }

  bool buffers_registered() const override { return buffers_registered_; }

 protected:
  Status DoAddFile(IoFileId id, int fd) override {
    if (!files_registered_) return Status::OK();
    const int ret = io_uring_register_files_update(&ring_, id, &fd, 1);
    if (ret < 0) return Status::FromErrno("io_uring_register_files_update", -ret);
    return Status::OK();
  }

  Status DoRemoveFile(IoFileId id) override {
    if (!files_registered_) return Status::OK();
    int fd = -1;
    const int ret = io_uring_register_files_update(&ring_, id, &fd, 1);
    if (ret < 0) return Status::FromErrno("io_uring_register_files_update", -ret);
    return Status::OK();
  }

  Status DoRegisterBuffers(std::span<std::byte> region) override {
    if (buffers_registered_) {
      io_uring_unregister_buffers(&ring_);
      buffers_registered_ = false;
    }
    region_begin_ = region_end_ = nullptr;
    buffer_note_.clear();
    if (region.empty() || !options_.register_buffers) return Status::OK();
    std::vector<iovec> iov;
    for (std::size_t off = 0; off < region.size(); off += kMaxFixedBuffer) {
      iov.push_back({region.data() + off, std::min(kMaxFixedBuffer, region.size() - off)});
    }
    const int ret =
        io_uring_register_buffers(&ring_, iov.data(), static_cast<unsigned>(iov.size()));
    if (ret < 0) {
      // Typically ENOMEM from RLIMIT_MEMLOCK: plain reads still work.
      buffer_note_ = fmt::format("register_buffers: {}", std::strerror(-ret));
      return Status::OK();
    }
    buffers_registered_ = true;
    region_begin_ = region.data();
    region_end_ = region.data() + region.size();
    return Status::OK();
  }

  Status DoSubmit(std::span<IoRequest* const> requests) override {
    if (!broken_.ok()) return broken_;
    for (IoRequest* r : requests) {
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      // Cannot happen: in-flight <= depth <= SQ entries and every earlier batch
      // was submitted in full. Guarded anyway so a bug fails loudly, not UB.
      if (sqe == nullptr) return Broken(Status::Busy("io_uring submission queue full"));
      const int fd = files_registered_ ? static_cast<int>(r->file) : fd_of(r->file);
      const int buf_index = FixedIndex(r->buffer, r->length);
      if (r->op == IoOp::kRead) {
        if (buf_index >= 0) {
          io_uring_prep_read_fixed(sqe, fd, r->buffer, r->length, r->offset, buf_index);
        } else {
          io_uring_prep_read(sqe, fd, r->buffer, r->length, r->offset);
        }
      } else {
        if (buf_index >= 0) {
          io_uring_prep_write_fixed(sqe, fd, r->buffer, r->length, r->offset, buf_index);
        } else {
          io_uring_prep_write(sqe, fd, r->buffer, r->length, r->offset);
        }
      }
      if (files_registered_) sqe->flags |= IOSQE_FIXED_FILE;
      io_uring_sqe_set_data(sqe, r);
    }
    unsigned submitted = 0;
    while (submitted < requests.size()) {
      const int ret = io_uring_submit(&ring_);
      if (ret == -EINTR) continue;
      if (ret < 0) {
        // The SQEs are published to the kernel but not consumed; the ring's
        // state can no longer be trusted, so the queue reports failure from
        // now on rather than waiting for requests that may never run.
        return Broken(Status::FromErrno("io_uring_submit", -ret));
      }
      submitted += static_cast<unsigned>(ret);
    }
    return Status::OK();
  }

  Result<std::size_t> DoPoll(std::span<IoRequest*> out) override {
    if (!broken_.ok()) return broken_;
    std::size_t n = Reap(out);
    if (n == 0 && coop_taskrun_ && (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_TASKRUN)) {
      // Completions are waiting as task work: one non-blocking enter runs it.
      io_uring_get_events(&ring_);
      n = Reap(out);
    }
    return n;
  }

  Result<std::size_t> DoWait(std::span<IoRequest*> out, std::size_t min_completions,
                             std::int64_t deadline_ns) override {
    if (!broken_.ok()) return broken_;
    const auto wait_nr = static_cast<unsigned>(min_completions);
    while (io_uring_cq_ready(&ring_) < wait_nr) {
      io_uring_cqe* cqe = nullptr;
      int ret;
      if (deadline_ns < 0) {
        ret = io_uring_wait_cqe_nr(&ring_, &cqe, wait_nr);
      } else {
        const std::int64_t left = deadline_ns - NowNanos();
        if (left <= 0) break;
        __kernel_timespec ts{.tv_sec = left / 1000000000, .tv_nsec = left % 1000000000};
        ret = io_uring_wait_cqes(&ring_, &cqe, wait_nr, &ts, nullptr);
      }
      if (ret == -EINTR) continue;
      if (ret == -ETIME) break;
      if (ret < 0) return Broken(Status::FromErrno("io_uring_wait_cqe", -ret));
      // wait_cqe_nr returns once wait_nr CQEs were ready; the loop re-checks
      // (a wakeup may come early when several waits overlap in the kernel).
    }
    return Reap(out);
  }

 private:
  Status Broken(Status s) {
    broken_ = s;
    return s;
  }

  // The registered-buffer index covering [p, p + len), or -1.
  int FixedIndex(const std::byte* p, std::uint32_t len) const {
    if (!buffers_registered_) return -1;
    const auto addr = reinterpret_cast<std::uintptr_t>(p);
    if (addr < reinterpret_cast<std::uintptr_t>(region_begin_) ||
        addr + len > reinterpret_cast<std::uintptr_t>(region_end_)) {
      return -1;
    }
    const auto off = static_cast<std::size_t>(p - region_begin_);
    const std::size_t index = off / kMaxFixedBuffer;
    if ((off + len - 1) / kMaxFixedBuffer != index) return -1;  // straddles two iovecs
    return static_cast<int>(index);
  }

  std::size_t Reap(std::span<IoRequest*> out) {
    const auto max = static_cast<unsigned>(std::min(out.size(), cqes_.size()));
    const unsigned n = io_uring_peek_batch_cqe(&ring_, cqes_.data(), max);
    for (unsigned i = 0; i < n; ++i) {
      auto* r = static_cast<IoRequest*>(io_uring_cqe_get_data(cqes_[i]));
      Finish(r, cqes_[i]->res);
      out[i] = r;
    }
    io_uring_cq_advance(&ring_, n);
    return n;
  }

  IoQueueOptions options_;
  io_uring ring_{};
  bool initialised_ = false;
  bool coop_taskrun_ = false;
  bool files_registered_ = false;
  bool buffers_registered_ = false;
  std::string buffer_note_;  // why buffers are not registered, if they were offered
  const std::byte* region_begin_ = nullptr;
  const std::byte* region_end_ = nullptr;
  std::vector<io_uring_cqe*> cqes_;
  Status broken_;
};

}  // namespace

Result<std::unique_ptr<IoQueue>> MakeUringQueue(const IoQueueOptions& options) {
  auto queue = std::make_unique<UringQueue>(options);
  STRATA_RETURN_IF_ERROR(queue->Init());
  return std::unique_ptr<IoQueue>(std::move(queue));
}

}  // namespace strata::io_internal
