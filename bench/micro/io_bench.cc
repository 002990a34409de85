// Software overhead of each IoQueue engine per request: submit a batch of
// 4 KiB reads, wait for all, repeat. Reads come from /dev/zero, which every
// engine completes without touching a device, so the time per item is the
// engine's own cost (system calls, ring handling, thread hand-off), the part
// a search pays on top of the SSD's latency. Device numbers: `strata iobench`.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <memory>
#include <vector>

#include "strata/io.h"

namespace strata {
namespace {

void BM_SubmitWait(benchmark::State& state) {
  const auto engine = static_cast<IoEngine>(state.range(0));
  const auto batch = static_cast<std::uint32_t>(state.range(1));
  const bool fixed = state.range(2) != 0;
  Result<std::unique_ptr<IoQueue>> made =
      MakeIoQueue({.engine = engine, .queue_depth = batch, .register_buffers = fixed});
  if (!made.ok()) {
    state.SkipWithError(made.status().ToString().c_str());
    return;
  }
  IoQueue& q = **made;
  const int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
  Result<IoFileId> id = q.AddFile(fd, "/dev/zero");
  Result<BufferPool> pool = BufferPool::Create(batch, kIoAlignment);
  if (fd < 0 || !id.ok() || !pool.ok() || !q.RegisterBuffers(pool->region()).ok()) {
    state.SkipWithError("setup failed");
    if (fd >= 0) ::close(fd);
    return;
  }
  std::vector<IoRequest> reqs(batch);
  std::vector<IoRequest*> ptrs;
  for (IoRequest& r : reqs) {
    r = IoRequest{.file = *id, .length = kIoAlignment, .buffer = pool->Acquire()};
    ptrs.push_back(&r);
  }
  std::vector<IoRequest*> done(batch);
  for (auto _ : state) {
    if (!q.Submit(ptrs).ok()) {
      state.SkipWithError("submit failed");
      break;
    }
    std::size_t got = 0;
    while (got < batch) {
      Result<std::size_t> n = q.Wait(done, batch - got);
      if (!n.ok()) break;
      got += *n;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * batch);
  state.SetLabel(q.Describe());
  (void)q.RemoveFile(*id);
  ::close(fd);
}

void Args(benchmark::internal::Benchmark* b) {
  for (IoEngine e : {IoEngine::kUring, IoEngine::kAio, IoEngine::kPread}) {
    for (int batch : {1, 8, 32}) {
      b->Args({static_cast<int>(e), batch, 1});
      if (e == IoEngine::kUring) b->Args({static_cast<int>(e), batch, 0});
    }
  }
  b->ArgNames({"engine", "batch", "fixed"});
}
BENCHMARK(BM_SubmitWait)->Apply(Args)->UseRealTime();

}  // namespace
}  // namespace strata

BENCHMARK_MAIN();
