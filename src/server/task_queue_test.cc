// SheddingTaskQueue: bounded waiting, overflow to the shedding path.
#include "server/task_queue.h"

#include <atomic>
#include <chrono>
#include <future>

#include <gtest/gtest.h>

namespace strata::server {
namespace {

TEST(SheddingTaskQueue, ShedsOnlyWhenWorkersBusyAndQueueFull) {
  SheddingTaskQueue q(/*threads=*/1, /*max_queue=*/1, /*overflow_threads=*/1);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  std::atomic<int> normal{0}, shed{0};
  // Holds the only worker until released.
  q.enqueue([&] {
    started.set_value();
    released.wait();
    (SheddingTaskQueue::IsShedding() ? shed : normal)++;
  });
  started.get_future().wait();
  // Waits in the queue (one slot).
  q.enqueue([&] { (SheddingTaskQueue::IsShedding() ? shed : normal)++; });
  // Pool and queue full: these run on the overflow path, at once.
  std::promise<void> shed_done;
  q.enqueue([&] { (SheddingTaskQueue::IsShedding() ? shed : normal)++; });
  q.enqueue([&] {
    (SheddingTaskQueue::IsShedding() ? shed : normal)++;
    shed_done.set_value();
  });
  ASSERT_EQ(shed_done.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(shed.load(), 2);
  EXPECT_EQ(normal.load(), 0);
  release.set_value();
  q.shutdown();  // finishes the accepted tasks
  EXPECT_EQ(normal.load(), 2);
  EXPECT_EQ(shed.load(), 2);
}

TEST(SheddingTaskQueue, NoSheddingWithinCapacity) {
  SheddingTaskQueue q(/*threads=*/2, /*max_queue=*/4);
  std::atomic<int> normal{0}, shed{0};
  // Sequential submitters never exceed the pool: nothing is shed.
  for (int i = 0; i < 200; ++i) {
    std::promise<void> done;
    q.enqueue([&] {
      (SheddingTaskQueue::IsShedding() ? shed : normal)++;
      done.set_value();
    });
    done.get_future().wait();
  }
  q.shutdown();
  EXPECT_EQ(normal.load(), 200);
  EXPECT_EQ(shed.load(), 0);
  EXPECT_FALSE(SheddingTaskQueue::IsShedding());  // not on this thread
}

TEST(SheddingTaskQueue, ZeroQueueShedsAsSoonAsWorkersAreBusy) {
  SheddingTaskQueue q(/*threads=*/1, /*max_queue=*/0);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> started;
  q.enqueue([&] {
    started.set_value();
    released.wait();
  });
  started.get_future().wait();
  std::promise<bool> shed;
  q.enqueue([&] { shed.set_value(SheddingTaskQueue::IsShedding()); });
  auto f = shed.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(f.get());
  release.set_value();
  q.shutdown();  // before the promises the tasks refer to go away
}

}  // namespace
}  // namespace strata::server
