// Thread-pool backend: the last resort where neither io_uring nor Linux AIO
// can be set up. Worker threads take requests from a shared list and call
// pread/pwrite (blocking); the owner collects results from a completion list
// and sleeps on a condition variable in Wait(). Concurrency, and so the depth
// the device sees, is bounded by the number of workers.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "io/backends.h"

namespace strata::io_internal {
namespace {

// Fixed-capacity FIFO; never allocates after construction.
template <typename T>
class Fifo {
 public:
  explicit Fifo(std::size_t capacity) : items_(capacity) {}
  std::size_t size() const { return size_; }
  void Push(T v) {
    items_[(head_ + size_) % items_.size()] = v;
    ++size_;
  }
  T Pop() {
    T v = items_[head_];
    head_ = (head_ + 1) % items_.size();
    --size_;
    return v;
  }

 private:
  std::vector<T> items_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

class PreadQueue final : public IoQueue {
 public:
  explicit PreadQueue(const IoQueueOptions& options)
      : IoQueue(options),
        num_threads_(options.pread_threads != 0 ? options.pread_threads
                                                : std::min<std::uint32_t>(options.queue_depth, 32)),
        pending_(options.queue_depth),
        completed_(options.queue_depth) {}

  ~PreadQueue() override {
    DrainAll();
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  Status Init() {
    threads_.reserve(num_threads_);
    for (std::uint32_t i = 0; i < num_threads_; ++i) {
      try {
        threads_.emplace_back([this] { WorkerLoop(); });
      } catch (const std::system_error& e) {
        // The destructor stops and joins the workers already started.
        return Status::NotSupported(fmt::format("pread engine: cannot start thread: {}", e.what()));
      }
    }
    return Status::OK();
  }

  IoEngine engine() const override { return IoEngine::kPread; }
  std::string Describe() const override {
    return fmt::format("pread(depth={}, threads={})", queue_depth(), num_threads_);
  }

 protected:
  Status DoAddFile(IoFileId, int) override { return Status::OK(); }
  Status DoRemoveFile(IoFileId) override { return Status::OK(); }
  Status DoRegisterBuffers(std::span<std::byte>) override { return Status::OK(); }

  Status DoSubmit(std::span<IoRequest* const> requests) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      // The descriptor is read here, on the owner's thread, so workers never
      // touch the queue's file table.
      for (IoRequest* r : requests) pending_.Push({r, fd_of(r->file)});
    }
    const std::size_t wake = std::min<std::size_t>(requests.size(), num_threads_);
    for (std::size_t i = 0; i < wake; ++i) work_cv_.notify_one();
    return Status::OK();
  }

  Result<std::size_t> DoPoll(std::span<IoRequest*> out) override {
    if (completed_count_.load(std::memory_order_acquire) == 0) return std::size_t{0};
    std::lock_guard<std::mutex> lock(mu_);
    return TakeCompleted(out);
  }

  Result<std::size_t> DoWait(std::span<IoRequest*> out, std::size_t min_completions,
                             std::int64_t deadline_ns) override {
    std::unique_lock<std::mutex> lock(mu_);
    waiter_needs_ = min_completions;
    auto enough = [&] { return completed_.size() >= min_completions; };
    if (deadline_ns < 0) {
      done_cv_.wait(lock, enough);
    } else {
      const std::chrono::steady_clock::time_point deadline{std::chrono::nanoseconds(deadline_ns)};
      done_cv_.wait_until(lock, deadline, enough);
    }
    waiter_needs_ = 0;
    return TakeCompleted(out);
  }

 private:
  struct Work {
    IoRequest* request;
    int fd;
  };

  std::size_t TakeCompleted(std::span<IoRequest*> out) {  // requires mu_
    std::size_t n = 0;
    while (n < out.size() && completed_.size() > 0) out[n++] = completed_.Pop();
    completed_count_.store(completed_.size(), std::memory_order_release);
    return n;
  }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (true) {
      work_cv_.wait(lock, [&] { return stop_ || pending_.size() > 0; });
      if (pending_.size() == 0) return;  // stop_ and nothing left
      const Work w = pending_.Pop();
      lock.unlock();
      IoRequest* r = w.request;
      ssize_t ret;
      do {
        ret = r->op == IoOp::kRead
                  ? ::pread(w.fd, r->buffer, r->length, static_cast<off_t>(r->offset))
                  : ::pwrite(w.fd, r->buffer, r->length, static_cast<off_t>(r->offset));
      } while (ret < 0 && errno == EINTR);
      Finish(r, ret < 0 ? -static_cast<std::int64_t>(errno) : static_cast<std::int64_t>(ret));
      lock.lock();
      completed_.Push(r);
      completed_count_.store(completed_.size(), std::memory_order_release);
      // Wake the owner only when its Wait() can return, not per completion.
      if (waiter_needs_ > 0 && completed_.size() >= waiter_needs_) done_cv_.notify_one();
    }
  }

  const std::uint32_t num_threads_;
  std::mutex mu_;
  std::condition_variable work_cv_;  // workers: pending_ non-empty or stop_
  std::condition_variable done_cv_;  // owner: enough completions for its Wait
  Fifo<Work> pending_;               // GUARDED_BY(mu_)
  Fifo<IoRequest*> completed_;       // GUARDED_BY(mu_)
  std::size_t waiter_needs_ = 0;     // GUARDED_BY(mu_); 0 when nobody waits
  bool stop_ = false;                // GUARDED_BY(mu_)
  // completed_.size() readable without the lock, so an empty Poll() is free.
  std::atomic<std::size_t> completed_count_{0};
  std::vector<std::thread> threads_;
};

}  // namespace

Result<std::unique_ptr<IoQueue>> MakePreadQueue(const IoQueueOptions& options) {
  auto queue = std::make_unique<PreadQueue>(options);
  STRATA_RETURN_IF_ERROR(queue->Init());
  return std::unique_ptr<IoQueue>(std::move(queue));
}

}  // namespace strata::io_internal
