// Linux native AIO backend (libaio): the fallback where io_uring is blocked
// (seccomp profiles of many container runtimes) or missing (kernels < 5.1).
// With O_DIRECT, io_submit queues the reads without blocking, one system call
// per batch; io_getevents collects them, sleeping in the kernel when asked to
// wait.
#include <fmt/format.h>
#include <libaio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "base/timer.h"
#include "io/backends.h"

namespace strata::io_internal {
namespace {

class AioQueue final : public IoQueue {
 public:
  explicit AioQueue(const IoQueueOptions& options)
      : IoQueue(options), iocbs_(options.queue_depth), events_(options.queue_depth) {
    free_.reserve(options.queue_depth);
    for (std::uint32_t i = options.queue_depth; i > 0; --i) free_.push_back(i - 1);
    batch_.reserve(options.queue_depth);
  }

  ~AioQueue() override {
    if (!initialised_) return;
    DrainAll();
    io_destroy(ctx_);
  }

  Status Init() {
    const int ret = io_setup(static_cast<int>(queue_depth()), &ctx_);
    if (ret < 0) {
      return Status::NotSupported(
          fmt::format("Linux AIO unavailable: io_setup: {}", std::strerror(-ret)));
    }
    initialised_ = true;
    return Status::OK();
  }

  IoEngine engine() const override { return IoEngine::kAio; }
  std::string Describe() const override { return fmt::format("aio(depth={})", queue_depth()); }

 protected:
  Status DoAddFile(IoFileId, int) override { return Status::OK(); }
  Status DoRemoveFile(IoFileId) override { return Status::OK(); }
  Status DoRegisterBuffers(std::span<std::byte>) override { return Status::OK(); }

  Status DoSubmit(std::span<IoRequest* const> requests) override {
    batch_.clear();
    for (IoRequest* r : requests) {
      // A free iocb always exists: in-flight <= depth = iocbs_.size().
      const std::uint32_t slot = free_.back();
      free_.pop_back();
      iocb* cb = &iocbs_[slot];
      if (r->op == IoOp::kRead) {
        io_prep_pread(cb, fd_of(r->file), r->buffer, r->length, static_cast<long long>(r->offset));
      } else {
        io_prep_pwrite(cb, fd_of(r->file), r->buffer, r->length, static_cast<long long>(r->offset));
      }
      cb->data = r;
      batch_.push_back(cb);
    }
    std::size_t done = 0;
    while (done < batch_.size()) {
      const int ret =
          io_submit(ctx_, static_cast<long>(batch_.size() - done), batch_.data() + done);
      if (ret > 0) {
        done += static_cast<std::size_t>(ret);
      } else if (ret == -EINTR) {
        continue;
      } else {
        // io_submit stops at the first iocb it rejects (e.g. EBADF for a
        // closed descriptor, EINVAL for a file without O_DIRECT support) and
        // reports its error: that request fails on its own, the rest go on.
        iocb* cb = batch_[done];
        auto* r = static_cast<IoRequest*>(cb->data);
        free_.push_back(static_cast<std::uint32_t>(cb - iocbs_.data()));
        CompleteNow(r, ret == 0 ? -EAGAIN : ret);
        ++done;
      }
    }
    return Status::OK();
  }

  Result<std::size_t> DoPoll(std::span<IoRequest*> out) override {
    timespec zero{0, 0};
    return GetEvents(out, 0, &zero);
  }

  Result<std::size_t> DoWait(std::span<IoRequest*> out, std::size_t min_completions,
                             std::int64_t deadline_ns) override {
    std::size_t n = 0;
    while (n < min_completions) {
      timespec ts{};
      timespec* timeout = nullptr;
      if (deadline_ns >= 0) {
        const std::int64_t left = deadline_ns - NowNanos();
        if (left <= 0) break;
        ts = {static_cast<time_t>(left / 1000000000), static_cast<long>(left % 1000000000)};
        timeout = &ts;
      }
      STRATA_ASSIGN_OR_RETURN(std::size_t got,
                              GetEvents(out.subspan(n), min_completions - n, timeout));
      n += got;
    }
    return n;
  }

 private:
  Result<std::size_t> GetEvents(std::span<IoRequest*> out, std::size_t min_nr, timespec* timeout) {
    const long max = static_cast<long>(std::min(out.size(), events_.size()));
    int ret;
    do {
      ret = io_getevents(ctx_, static_cast<long>(min_nr), max, events_.data(), timeout);
    } while (ret == -EINTR && min_nr == 0);
    if (ret == -EINTR) return std::size_t{0};  // the caller's loop re-waits with the time left
    if (ret < 0) return Status::FromErrno("io_getevents", -ret);
    for (int i = 0; i < ret; ++i) {
      const io_event& ev = events_[i];
      auto* r = static_cast<IoRequest*>(ev.data);
      // res carries bytes or -errno in an unsigned long.
      Finish(r, static_cast<long>(ev.res));
      free_.push_back(static_cast<std::uint32_t>(ev.obj - iocbs_.data()));
      out[i] = r;
    }
    return static_cast<std::size_t>(ret);
  }

  io_context_t ctx_ = nullptr;
  bool initialised_ = false;
  std::vector<iocb> iocbs_;
  std::vector<std::uint32_t> free_;  // indices of unused iocbs_
  std::vector<iocb*> batch_;
  std::vector<io_event> events_;
};

}  // namespace

Result<std::unique_ptr<IoQueue>> MakeAioQueue(const IoQueueOptions& options) {
  auto queue = std::make_unique<AioQueue>(options);
  STRATA_RETURN_IF_ERROR(queue->Init());
  return std::unique_ptr<IoQueue>(std::move(queue));
}

}  // namespace strata::io_internal
