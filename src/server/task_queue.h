// The request worker pool of `strata serve`, with load shedding.
//
// httplib hands each accepted connection to its TaskQueue as one task that
// serves the connection's requests (up to its keep-alive limit) and closes it.
// Its stock ThreadPool queues without bound, so under overload latency grows
// until clients time out. SheddingTaskQueue keeps `threads` workers and at
// most `max_queue` connections waiting; a connection beyond that goes to a
// small overflow pool instead, which runs the same task with IsShedding()
// true, so that the route handler answers its requests with 503 (and
// Retry-After, Connection: close) without touching a collection. The
// overflow path reads a request and writes a short reply, so a handful of
// threads keep up with a flood; when even its queue is full, enqueue blocks
// the accept thread (back-pressure to the kernel's listen backlog) rather
// than grow.
#ifndef STRATA_SERVER_TASK_QUEUE_H_
#define STRATA_SERVER_TASK_QUEUE_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

namespace strata::server {

class SheddingTaskQueue : public httplib::TaskQueue {
 public:
  // threads >= 1 request workers; up to max_queue connections wait for one
  // (0: none wait). overflow_threads >= 1 answer the shed connections, with
  // up to overflow_queue of them waiting.
  SheddingTaskQueue(std::size_t threads, std::size_t max_queue, std::size_t overflow_threads = 2,
                    std::size_t overflow_queue = 256);
  ~SheddingTaskQueue() override;

  // Thread-safe. Runs fn on a worker, or on the overflow path when all
  // workers are busy and max_queue connections already wait.
  void enqueue(std::function<void()> fn) override;
  // Finishes every task already accepted (both paths), then joins.
  void shutdown() override;

  // True on an overflow thread while it runs a shed connection's task.
  static bool IsShedding();

 private:
  // One set of threads taking tasks from one queue.
  struct Pool {
    std::vector<std::thread> threads;
    std::deque<std::function<void()>> jobs;  // guarded by mu_
    std::size_t busy = 0;                    // guarded by mu_
    std::condition_variable ready;           // jobs non-empty or stopping
  };
  void Work(Pool* pool, bool shedding);

  const std::size_t threads_;
  const std::size_t max_queue_;
  const std::size_t overflow_queue_;
  std::mutex mu_;
  std::condition_variable overflow_space_;  // the overflow queue shrank
  bool stopping_ = false;                   // guarded by mu_
  Pool main_;
  Pool overflow_;
};

}  // namespace strata::server

#endif  // STRATA_SERVER_TASK_QUEUE_H_
