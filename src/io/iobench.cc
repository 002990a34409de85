// iobench: uniform random reads over a file at a fixed queue depth per
// thread, the same workload as `fio --rw=randread --direct=1 --iodepth=QD`.
//
// Each thread owns an IoQueue, a registered BufferPool of QD buffers and QD
// requests, keeps all QD reads in flight (refilling every completed slot in
// one Submit batch), and records the latency from submission to collection of
// every read in a LatencyHistogram. Queues and buffers are set up before the
// clock starts; after the deadline no new reads are issued and the last ones
// drain (they count).
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "base/timer.h"
#include "io/latency_histogram.h"
#include "strata/io.h"
#include "strata/progress.h"

namespace strata {
namespace {

constexpr std::uint64_t kDefaultFileSize = std::uint64_t{2} << 30;

// splitmix64: fast, seedable, good enough for offsets and fill data.
std::uint64_t SplitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double ProcessCpuSeconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

struct ThreadState {
  std::unique_ptr<IoQueue> queue;
  BufferPool pool;
  std::vector<IoRequest> requests;
  std::vector<std::int64_t> submit_ns;  // per request slot
  LatencyHistogram histogram;
  IoStats stats;
  Status status;
  std::int64_t end_ns = 0;
};

Status SetUpThread(const DirectFile& file, IoEngine engine, std::uint32_t queue_depth,
                   std::uint32_t block_size, ThreadState& t) {
  IoQueueOptions qo;
  qo.engine = engine;
  qo.queue_depth = queue_depth;
  qo.max_files = 1;
  STRATA_ASSIGN_OR_RETURN(t.queue, MakeIoQueue(qo));
  STRATA_ASSIGN_OR_RETURN(t.pool, BufferPool::Create(queue_depth, block_size));
  STRATA_RETURN_IF_ERROR(t.queue->RegisterBuffers(t.pool.region()));
  STRATA_ASSIGN_OR_RETURN(IoFileId id, t.queue->AddFile(file));
  t.requests.resize(queue_depth);
  t.submit_ns.resize(queue_depth);
  for (std::uint32_t i = 0; i < queue_depth; ++i) {
    IoRequest& r = t.requests[i];
    r.file = id;
    r.length = block_size;
    r.buffer = t.pool.Acquire();
    r.tag = i;
  }
  return Status::OK();
}

// The measured loop of one thread.
Status RunThread(ThreadState& t, std::uint64_t blocks, std::uint32_t block_size, std::uint64_t seed,
                 std::int64_t deadline_ns, const std::atomic<bool>& abort) {
  IoQueue& q = *t.queue;
  const std::size_t depth = t.requests.size();
  std::vector<IoRequest*> batch;
  std::vector<IoRequest*> done(depth);
  batch.reserve(depth);
  std::uint64_t rng = seed;
  auto next_offset = [&] {
    // Lemire's multiply-shift maps 64 random bits onto [0, blocks).
    const auto block = static_cast<std::uint64_t>(
        (static_cast<unsigned __int128>(SplitMix64(rng)) * blocks) >> 64);
    return block * block_size;
  };
  auto submit = [&] {
    const std::int64_t now = NowNanos();
    for (IoRequest* r : batch) t.submit_ns[r->tag] = now;
    return q.Submit(batch);
  };
  for (IoRequest& r : t.requests) {
    r.offset = next_offset();
    batch.push_back(&r);
  }
  STRATA_RETURN_IF_ERROR(submit());
  while (q.in_flight() > 0) {
    STRATA_ASSIGN_OR_RETURN(std::size_t n, q.Wait(done, 1));
    const std::int64_t now = NowNanos();
    const bool refill = now < deadline_ns && !abort.load(std::memory_order_relaxed);
    batch.clear();
    for (std::size_t i = 0; i < n; ++i) {
      IoRequest* r = done[i];
      if (!r->status.ok()) return r->status;
      t.histogram.Record(static_cast<std::uint64_t>(now - t.submit_ns[r->tag]));
      if (refill) {
        r->offset = next_offset();
        batch.push_back(r);
      }
    }
    if (!batch.empty()) STRATA_RETURN_IF_ERROR(submit());
  }
  return Status::OK();
}

}  // namespace

Status IobenchOptions::Validate() const {
  if (path.empty()) return Status::InvalidArgument("iobench: --file is required");
  if (block_size < kIoAlignment || block_size > (16u << 20) || block_size % kIoAlignment != 0) {
    return Status::InvalidArgument(
        fmt::format("iobench: block size must be a multiple of {} up to 16 MiB, got {}",
                    kIoAlignment, block_size));
  }
  if (file_size != 0 && (file_size % kIoAlignment != 0 || file_size < block_size)) {
    return Status::InvalidArgument(
        fmt::format("iobench: size must be a multiple of {} and at least one block, got {}",
                    kIoAlignment, file_size));
  }
  if (queue_depths.empty()) return Status::InvalidArgument("iobench: no queue depth given");
  for (std::uint32_t qd : queue_depths) {
    if (qd < 1 || qd > 4096) {
      return Status::InvalidArgument(fmt::format("iobench: queue depth {} not in 1..4096", qd));
    }
  }
  if (threads.empty()) return Status::InvalidArgument("iobench: no thread count given");
  for (std::uint32_t t : threads) {
    if (t < 1 || t > 256) {
      return Status::InvalidArgument(fmt::format("iobench: thread count {} not in 1..256", t));
    }
  }
  if (engines.empty()) return Status::InvalidArgument("iobench: no engine given");
  if (!std::isfinite(seconds) || seconds <= 0 || seconds > 86400) {
    return Status::InvalidArgument(
        fmt::format("iobench: seconds must be in (0, 86400], got {}", seconds));
  }
  return Status::OK();
}

Status PrepareIobenchFile(const std::string& path, std::uint64_t size) {
  if (size == 0 || size % kIoAlignment != 0) {
    return Status::InvalidArgument(fmt::format(
        "PrepareIobenchFile: size {} is not a positive multiple of {}", size, kIoAlignment));
  }
  std::uint64_t current = 0;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(fmt::format("{} is not a regular file", path));
    }
    current = static_cast<std::uint64_t>(st.st_size);
    if (current >= size) return Status::OK();
  } else if (errno != ENOENT) {
    return Status::FromErrno(fmt::format("stat {}", path), errno);
  }
  STRATA_ASSIGN_OR_RETURN(PageWriter writer, PageWriter::Open(path, {.create_if_missing = true}));
  constexpr std::size_t kChunk = std::size_t{4} << 20;
  STRATA_ASSIGN_OR_RETURN(BufferPool chunk, BufferPool::Create(1, kChunk));
  std::byte* buf = chunk.Acquire();
  // Rewrite a partial last block, then fill to `size`; the data depends only
  // on the offset, so a file extended in steps equals one written at once.
  std::uint64_t offset = current / kIoAlignment * kIoAlignment;
  ProgressBar progress("iobench: writing " + path, size - offset);
  while (offset < size) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, size - offset));
    auto* words = reinterpret_cast<std::uint64_t*>(buf);
    for (std::size_t i = 0; i < n / 8; ++i) {
      std::uint64_t state = offset / 8 + i;  // a function of the word's file position only
      words[i] = SplitMix64(state) | 1;      // never zero
    }
    STRATA_RETURN_IF_ERROR(writer.WriteAt(offset, {buf, n}));
    offset += n;
    progress.Add(n);
  }
  STRATA_RETURN_IF_ERROR(writer.Sync());
  return writer.Close();
}

Result<IobenchResult> RunIobenchSetting(const IobenchOptions& options, IoEngine engine,
                                        std::uint32_t queue_depth, std::uint32_t threads) {
  STRATA_ASSIGN_OR_RETURN(DirectFile file, DirectFile::Open(options.path));
  STRATA_ASSIGN_OR_RETURN(std::uint64_t actual_size, file.Size());
  const std::uint64_t size = options.file_size != 0 ? options.file_size : actual_size;
  if (actual_size < size) {
    return Status::InvalidArgument(fmt::format("iobench: {} has {} bytes, fewer than --size {}",
                                               options.path, actual_size, size));
  }
  const std::uint64_t blocks = size / options.block_size;
  if (blocks == 0) {
    return Status::InvalidArgument(fmt::format("iobench: {} is smaller than one block of {} bytes",
                                               options.path, options.block_size));
  }

  std::vector<ThreadState> states(threads);
  for (ThreadState& t : states) {
    STRATA_RETURN_IF_ERROR(SetUpThread(file, engine, queue_depth, options.block_size, t));
  }

  std::atomic<bool> abort{false};
  const double cpu_start = ProcessCpuSeconds();
  const std::int64_t start_ns = NowNanos();
  const auto deadline_ns = start_ns + static_cast<std::int64_t>(options.seconds * 1e9);
  std::vector<std::thread> workers;
  workers.reserve(threads);
  for (std::uint32_t i = 0; i < threads; ++i) {
    workers.emplace_back([&, i] {
      ThreadState& t = states[i];
      const std::uint64_t seed = options.seed * 0x100000001B3ull + i;
      t.status = RunThread(t, blocks, options.block_size, seed, deadline_ns, abort);
      if (!t.status.ok()) abort.store(true);
      t.end_ns = NowNanos();
    });
  }
  for (std::thread& w : workers) w.join();
  const double cpu_seconds = ProcessCpuSeconds() - cpu_start;

  IobenchResult result;
  result.engine = states[0].queue->engine();
  result.engine_description = states[0].queue->Describe();
  result.queue_depth = queue_depth;
  result.threads = threads;
  result.block_size = options.block_size;
  LatencyHistogram all;
  std::int64_t end_ns = start_ns;
  for (ThreadState& t : states) {
    if (!t.status.ok())
      return t.status.WithContext(fmt::format("iobench {}", result.engine_description));
    all.Merge(t.histogram);
    result.stats.Merge(t.queue->stats());
    end_ns = std::max(end_ns, t.end_ns);
  }
  result.seconds = static_cast<double>(end_ns - start_ns) * 1e-9;
  result.reads = all.count();
  result.iops = static_cast<double>(result.reads) / result.seconds;
  result.mbps = result.iops * options.block_size / 1e6;
  result.mean_us = all.Mean() / 1e3;
  result.p50_us = all.Percentile(50) / 1e3;
  result.p99_us = all.Percentile(99) / 1e3;
  result.max_us = static_cast<double>(all.Max()) / 1e3;
  result.cpu_percent = 100.0 * cpu_seconds / result.seconds;
  return result;
}

Result<std::vector<IobenchResult>> RunIobench(
    const IobenchOptions& options, const std::function<void(const IobenchResult&)>& on_result) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  IobenchOptions opts = options;
  if (opts.file_size == 0) {
    struct stat st;
    if (::stat(opts.path.c_str(), &st) == 0) {
      opts.file_size = static_cast<std::uint64_t>(st.st_size) / opts.block_size * opts.block_size;
      if (opts.file_size == 0) opts.file_size = kDefaultFileSize;
    } else {
      opts.file_size = kDefaultFileSize;
    }
  }
  STRATA_RETURN_IF_ERROR(PrepareIobenchFile(opts.path, opts.file_size));
  std::vector<IobenchResult> results;
  for (IoEngine engine : opts.engines) {
    for (std::uint32_t threads : opts.threads) {
      for (std::uint32_t qd : opts.queue_depths) {
        STRATA_ASSIGN_OR_RETURN(IobenchResult r, RunIobenchSetting(opts, engine, qd, threads));
        if (on_result) on_result(r);
        results.push_back(std::move(r));
      }
    }
  }
  return results;
}

}  // namespace strata
