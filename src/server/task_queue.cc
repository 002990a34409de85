// SheddingTaskQueue: see task_queue.h.
#include "server/task_queue.h"

#include <algorithm>

namespace strata::server {
namespace {

thread_local bool t_shedding = false;

}  // namespace

SheddingTaskQueue::SheddingTaskQueue(std::size_t threads, std::size_t max_queue,
                                     std::size_t overflow_threads, std::size_t overflow_queue)
    : threads_(std::max<std::size_t>(1, threads)),
      max_queue_(max_queue),
      overflow_queue_(std::max<std::size_t>(1, overflow_queue)) {
  for (std::size_t i = 0; i < threads_; ++i) {
    main_.threads.emplace_back([this] { Work(&main_, false); });
  }
  for (std::size_t i = 0; i < std::max<std::size_t>(1, overflow_threads); ++i) {
    overflow_.threads.emplace_back([this] { Work(&overflow_, true); });
  }
}

SheddingTaskQueue::~SheddingTaskQueue() {
  bool joined;
  {
    std::lock_guard<std::mutex> lock(mu_);
    joined = stopping_;
  }
  if (!joined) shutdown();
}

bool SheddingTaskQueue::IsShedding() { return t_shedding; }

void SheddingTaskQueue::enqueue(std::function<void()> fn) {
  std::unique_lock<std::mutex> lock(mu_);
  // In the system: running plus waiting. A worker that is free but has not
  // yet taken its job counts as waiting, so the bound is exact.
  if (main_.busy + main_.jobs.size() < threads_ + max_queue_) {
    main_.jobs.push_back(std::move(fn));
    lock.unlock();
    main_.ready.notify_one();
    return;
  }
  overflow_space_.wait(lock, [&] { return stopping_ || overflow_.jobs.size() < overflow_queue_; });
  overflow_.jobs.push_back(std::move(fn));
  lock.unlock();
  overflow_.ready.notify_one();
}

void SheddingTaskQueue::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  main_.ready.notify_all();
  overflow_.ready.notify_all();
  overflow_space_.notify_all();
  for (Pool* pool : {&main_, &overflow_}) {
    for (std::thread& t : pool->threads) t.join();
  }
}

void SheddingTaskQueue::Work(Pool* pool, bool shedding) {
  t_shedding = shedding;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    pool->ready.wait(lock, [&] { return stopping_ || !pool->jobs.empty(); });
    if (pool->jobs.empty()) return;  // stopping, and nothing left to finish
    std::function<void()> fn = std::move(pool->jobs.front());
    pool->jobs.pop_front();
    ++pool->busy;
    if (shedding) overflow_space_.notify_one();
    lock.unlock();
    fn();
    fn = nullptr;  // release the task's captures outside the lock
    lock.lock();
    --pool->busy;
  }
}

}  // namespace strata::server
