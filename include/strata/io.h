// Asynchronous SSD I/O: the one path by which every index reads its
// SSD-resident data, plus the aligned write path used to build and update
// index files, and the `iobench` random-read benchmark.
//
// Model (rocksdb FileSystem / FSReadRequest style):
//   * Files are opened with O_DIRECT (DirectFile). Every offset and length is a
//     multiple of kIoAlignment (4 KiB) and every buffer address is 4 KiB
//     aligned; BufferPool hands out such buffers without allocating.
//   * An IoQueue is an explicit, caller-owned asynchronous queue (one per search
//     context / thread; never looked up by thread id). The caller fills
//     IoRequest structs, Submit()s a batch of pointers to them (one system call
//     per batch), keeps computing, and collects finished requests with Poll()
//     (non-blocking) or Wait() (blocks in the kernel, never spins). Each request
//     carries its own Status and byte count.
//   * Backends behind the same interface: io_uring (registered files,
//     registered buffers -> READ_FIXED), Linux native AIO (libaio), and a small
//     pool of pread threads. MakeIoQueue() picks the first one that works in
//     this process (io_uring may be blocked by seccomp or an old kernel) or the
//     one forced by IoQueueOptions::engine; queue->engine() reports the choice.
//   * IoStats counts reads, bytes, pages, time blocked in Wait() and the
//     maximum number of requests in flight, per queue; ResetStats() gives
//     per-query windows and IoStats::Merge() per-thread totals.
//
// Errors: nothing here throws or aborts. Bad arguments give InvalidArgument; an
// operating-system failure gives IOError with strerror text; a read that
// reaches past the end of a file gives OutOfRange on that request.
#ifndef STRATA_IO_H_
#define STRATA_IO_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/result.h"
#include "strata/status.h"

namespace strata {

// Alignment, in bytes, of every O_DIRECT offset, length and buffer address.
inline constexpr std::size_t kIoAlignment = 4096;

// ---------------------------------------------------------------------------
// Engines
// ---------------------------------------------------------------------------

// The asynchronous I/O backend of an IoQueue.
enum class IoEngine {
  kAuto,   // first available of kUring, kAio, kPread (MakeIoQueue only)
  kUring,  // io_uring via liburing
  kAio,    // Linux native AIO via libaio (io_submit / io_getevents)
  kPread,  // a small pool of threads calling pread/pwrite
};

// "auto", "uring", "aio" or "pread".
std::string_view IoEngineName(IoEngine engine);
// Accepts "auto", "uring" (also "io_uring"), "aio" (also "libaio"), "pread"
// (also "psync"); case-sensitive. InvalidArgument names the accepted values.
Result<IoEngine> ParseIoEngine(std::string_view name);
// A comma-separated list of engine names, or "all" for {kUring, kAio, kPread}.
// Rejects empty items and duplicates.
Result<std::vector<IoEngine>> ParseIoEngineList(std::string_view text);

// ---------------------------------------------------------------------------
// Requests and counters
// ---------------------------------------------------------------------------

enum class IoOp : std::uint8_t {
  kRead = 0,   // read `length` bytes at `offset` into `buffer`
  kWrite = 1,  // write `length` bytes from `buffer` at `offset`
};

// Identifies a file added to one IoQueue (IoQueue::AddFile); meaningful only
// for that queue.
using IoFileId = std::uint32_t;

// One asynchronous read or write. The caller owns the struct and the buffer
// and must keep both alive and untouched from Submit() until the request is
// returned by Poll()/Wait(). Plain data; no allocation.
struct IoRequest {
  // ---- inputs, set by the caller ----
  IoOp op = IoOp::kRead;
  IoFileId file = 0;            // from IoQueue::AddFile on the same queue
  std::uint64_t offset = 0;     // bytes; multiple of kIoAlignment
  std::uint32_t length = 0;     // bytes; > 0, multiple of kIoAlignment, <= kMaxIoLength
  std::byte* buffer = nullptr;  // `length` bytes, address aligned to kIoAlignment
  std::uint64_t tag = 0;        // caller's cookie (e.g. node id); never touched

  // ---- outputs, set by the queue when the request completes ----
  std::uint32_t bytes_transferred = 0;  // == length when status is OK
  // OK; OutOfRange for a read that reached the end of the file (the number of
  // bytes that were read is in bytes_transferred, nothing is zero-filled);
  // IOError with strerror text for an operating-system error.
  Status status = Status::OK();

  // Largest accepted `length` (1 GiB).
  static constexpr std::uint32_t kMaxIoLength = 1u << 30;
};

// Counters of one IoQueue since creation or the last ResetStats(). Requests are
// counted when submitted; errors when their completion is collected.
struct IoStats {
  std::uint64_t reads = 0;           // read requests submitted
  std::uint64_t writes = 0;          // write requests submitted
  std::uint64_t bytes_read = 0;      // bytes requested by submitted reads
  std::uint64_t bytes_written = 0;   // bytes requested by submitted writes
  std::uint64_t pages_read = 0;      // bytes_read / kIoAlignment
  std::uint64_t pages_written = 0;   // bytes_written / kIoAlignment
  std::uint64_t errors = 0;          // completed requests whose status is not OK
  std::uint64_t submit_batches = 0;  // non-empty Submit() calls (one syscall each for uring/aio)
  std::uint64_t wait_ns = 0;         // nanoseconds spent blocked inside Wait()
  std::uint32_t max_in_flight = 0;   // most requests in flight at once

  // Adds `other`'s counts into this one (max for max_in_flight): a per-thread
  // total from per-query windows, or a run total from per-thread stats.
  void Merge(const IoStats& other);
};

// ---------------------------------------------------------------------------
// IoQueue
// ---------------------------------------------------------------------------

struct IoQueueOptions {
  // Backend; kAuto tries kUring, then kAio, then kPread. A forced engine that
  // cannot be set up in this process makes MakeIoQueue return NotSupported.
  IoEngine engine = IoEngine::kAuto;
  // Most requests in flight at once (Submit returns Busy beyond it); 1..4096.
  std::uint32_t queue_depth = 64;
  // Most files added at once (AddFile); 1..65536.
  std::uint32_t max_files = 16;
  // io_uring: add files to the ring's registered-file table so each request
  // skips the per-I/O file lookup. If the kernel refuses, plain descriptors are
  // used (see Describe()). Ignored by other engines.
  bool register_files = true;
  // io_uring: pin regions given to RegisterBuffers() and use READ_FIXED /
  // WRITE_FIXED for requests whose buffer lies inside them. If the kernel
  // refuses (e.g. RLIMIT_MEMLOCK), plain reads are used. Ignored by others.
  bool register_buffers = true;
  // pread engine: worker threads; 0 means min(queue_depth, 32). At most 256.
  std::uint32_t pread_threads = 0;

  // InvalidArgument naming the first field out of range.
  Status Validate() const;
};

class DirectFile;

// A caller-owned asynchronous I/O queue. Create with MakeIoQueue().
//
// Thread-safety: thread-compatible. One thread at a time may call a queue's
// methods (it may be handed between threads with external synchronisation);
// use one queue per thread for parallel I/O.
//
// Usage:
//   auto q = MakeIoQueue({.queue_depth = 32});
//   IoFileId f = *(*q)->AddFile(file);
//   (*q)->Submit(batch);                // returns once the batch is issued
//   ... compute ...
//   auto n = (*q)->Poll(done);          // whatever has completed, maybe none
//   auto m = (*q)->Wait(done, 1);       // block until at least one completes
class IoQueue {
 public:
  // Waits for every request still in flight (their buffers may be written to
  // until then) and releases the kernel resources.
  virtual ~IoQueue();
  IoQueue(const IoQueue&) = delete;
  IoQueue& operator=(const IoQueue&) = delete;

  // The backend actually in use (never kAuto).
  virtual IoEngine engine() const = 0;
  // One line for logs and benchmark output, e.g.
  // "uring(depth=64, registered files, registered buffers)".
  virtual std::string Describe() const = 0;

  std::uint32_t queue_depth() const { return depth_; }
  // Requests submitted and not yet returned by Poll()/Wait().
  std::uint32_t in_flight() const { return in_flight_; }
  // Requests that can be submitted now: queue_depth() - in_flight().
  std::uint32_t capacity() const { return depth_ - in_flight_; }

  // Makes the open descriptor `fd` usable in requests (IoRequest::file).
  // `name` (e.g. the path) is only used in error messages. The descriptor must
  // stay open until RemoveFile() (io_uring with registered files keeps its own
  // reference, other engines do not). Fails with InvalidArgument for a closed
  // or invalid descriptor, Busy when max_files are in use.
  Result<IoFileId> AddFile(int fd, std::string_view name = {});
  Result<IoFileId> AddFile(const DirectFile& file);
  // Forgets a file. Busy while requests on it are in flight.
  Status RemoveFile(IoFileId id);

  // Offers `region` (kIoAlignment-aligned, e.g. BufferPool::region()) for
  // registration with the kernel; later requests whose buffer lies inside it
  // use fixed-buffer I/O where the engine supports it. Replaces any earlier
  // region. Best effort: returns OK whether or not the kernel pinned it (see
  // buffers_registered()); InvalidArgument for a misaligned or empty region,
  // Busy while requests are in flight. The region must outlive the queue or
  // the next RegisterBuffers call.
  Status RegisterBuffers(std::span<std::byte> region);
  // True when the last region given to RegisterBuffers is pinned in the kernel.
  virtual bool buffers_registered() const { return false; }

  // Issues every request of `requests` in one batch (one system call for
  // uring/aio) and returns without waiting for any to complete. All or
  // nothing: InvalidArgument (naming the request index and field) if any
  // request has an unaligned offset/length/buffer, a zero or too large length,
  // or an unknown file id; Busy if more than capacity() requests are given.
  // Then nothing is submitted. A request the kernel rejects individually is
  // still accepted here and completes with an error status.
  Status Submit(std::span<IoRequest* const> requests);
  Status Submit(IoRequest* request) { return Submit(std::span<IoRequest* const>(&request, 1)); }

  // Non-blocking: stores up to completed.size() finished requests (in
  // completion order, which is any order) into `completed` and returns how
  // many; 0 when none is ready. Each returned request has its outputs set and
  // is no longer in flight.
  Result<std::size_t> Poll(std::span<IoRequest*> completed);

  // Blocking: sleeps in the kernel (or on a condition variable) until at least
  // `min_completions` requests have finished, then stores up to
  // completed.size() of them like Poll(). `min_completions` is clamped to
  // min(in_flight(), completed.size()); with nothing in flight it returns 0 at
  // once. `timeout_us` < 0 waits without limit; otherwise the call returns
  // after about that many microseconds with however many completed (possibly
  // fewer than min_completions, not an error). Time spent here is added to
  // IoStats::wait_ns.
  Result<std::size_t> Wait(std::span<IoRequest*> completed, std::size_t min_completions,
                           std::int64_t timeout_us = -1);

  // Thin synchronous wrapper: submits `requests` (in chunks of queue_depth())
  // and waits for all of them. Requires in_flight() == 0 (Busy otherwise) so
  // that no unrelated completion is consumed. Returns the first non-OK request
  // status, in request order (every request's own status is set too).
  Status RunToCompletion(std::span<IoRequest* const> requests);

  const IoStats& stats() const { return stats_; }
  // Returns the counters and zeroes them (max_in_flight restarts from the
  // current in_flight()).
  IoStats ResetStats();

 protected:
  explicit IoQueue(const IoQueueOptions& options);

  // ---- backend hooks; the public methods above validate and keep counters ----
  // Called with a free slot id and a descriptor already checked to be open.
  virtual Status DoAddFile(IoFileId id, int fd) = 0;
  virtual Status DoRemoveFile(IoFileId id) = 0;
  // Called with no request in flight; an empty region clears.
  virtual Status DoRegisterBuffers(std::span<std::byte> region) = 0;
  // Issues requests that passed validation (fits capacity). A request that
  // fails on its own is handed to CompleteNow(); an error return means the
  // queue itself failed and none of `requests` was issued.
  virtual Status DoSubmit(std::span<IoRequest* const> requests) = 0;
  // Non-blocking collection of up to out.size() finished requests, each passed
  // through Finish() or with outputs already set.
  virtual Result<std::size_t> DoPoll(std::span<IoRequest*> out) = 0;
  // Blocks until at least min_completions (>= 1, <= out.size(), <= in flight
  // in the backend) are available or until the deadline (NowNanos() clock;
  // < 0 means none), then collects like DoPoll.
  virtual Result<std::size_t> DoWait(std::span<IoRequest*> out, std::size_t min_completions,
                                     std::int64_t deadline_ns) = 0;

  // For backends: completes `request` immediately with a kernel-style result
  // (see Finish); it is returned by the next Poll/Wait. Call only from
  // DoSubmit, for a request the kernel refused on its own.
  void CompleteNow(IoRequest* request, std::int64_t result);
  // For backends: sets a request's outputs from a kernel-style result
  // (bytes >= 0 or -errno). Safe to call from any thread (touches only the
  // request and immutable queue data).
  void Finish(IoRequest* request, std::int64_t result) const;
  // Descriptor of an added file (valid for ids that passed validation).
  int fd_of(IoFileId id) const { return files_[id].fd; }
  // Waits for everything in flight; backends call it first in their destructor.
  void DrainAll();

 private:
  struct FileSlot {
    int fd = -1;  // -1: free
    std::uint32_t in_flight = 0;
    std::string name;
  };
  Status ValidateRequest(std::size_t index, const IoRequest& r) const;
  // Bookkeeping for requests leaving the queue.
  void Reap(std::span<IoRequest*> done);
  std::size_t TakeReady(std::span<IoRequest*> out);

  std::uint32_t depth_;
  std::uint32_t in_flight_ = 0;
  IoStats stats_;
  std::vector<FileSlot> files_;
  std::vector<IoRequest*> ready_;  // completed at submit time; capacity depth_
  std::size_t ready_head_ = 0;
};

// Creates a queue for `options.engine`, falling back in the order uring, aio,
// pread for kAuto. InvalidArgument for bad options; NotSupported when a
// forced engine is unavailable here (message gives the kernel's reason).
Result<std::unique_ptr<IoQueue>> MakeIoQueue(const IoQueueOptions& options);

// OK when `engine` (not kAuto) can be set up in this process, else
// NotSupported with the reason. Creates and destroys a tiny queue.
Status ProbeIoEngine(IoEngine engine);

// ---------------------------------------------------------------------------
// Files and buffers
// ---------------------------------------------------------------------------

enum class DirectFileMode {
  kRead,       // O_RDONLY | O_DIRECT
  kReadWrite,  // O_RDWR | O_DIRECT (file must exist)
};

// An open O_DIRECT file descriptor. Move-only; closes on destruction.
// Thread-safe for concurrent ReadAt/Size calls (pread does not move a cursor).
class DirectFile {
 public:
  // Opens `path`. NotFound if it does not exist; NotSupported if the
  // filesystem rejects O_DIRECT (e.g. an old tmpfs); IOError otherwise.
  static Result<DirectFile> Open(const std::string& path,
                                 DirectFileMode mode = DirectFileMode::kRead);

  DirectFile() = default;
  DirectFile(DirectFile&& other) noexcept;
  DirectFile& operator=(DirectFile&& other) noexcept;
  ~DirectFile();

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }

  // Current file size in bytes (fstat).
  Result<std::uint64_t> Size() const;
  // Synchronous aligned read of buffer.size() bytes at `offset` (same
  // alignment rules and errors as an IoRequest; OutOfRange past EOF).
  Status ReadAt(std::uint64_t offset, std::span<std::byte> buffer) const;
  // Closes the descriptor; reports close()'s error. Idempotent.
  Status Close();

 private:
  DirectFile(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  int fd_ = -1;
  std::string path_;
};

// `count` equal buffers of `buffer_size` bytes (a multiple of kIoAlignment),
// carved from one aligned allocation so the whole pool can be registered with
// an IoQueue (RegisterBuffers(pool.region())). Acquire/Release are O(1) and do
// not allocate. Move-only. Thread-compatible (one owner, like the IoQueue it
// feeds).
class BufferPool {
 public:
  // InvalidArgument for count == 0 or a bad buffer_size; IOError if the memory
  // cannot be allocated.
  static Result<BufferPool> Create(std::size_t count, std::size_t buffer_size);

  BufferPool() = default;
  BufferPool(BufferPool&&) noexcept = default;
  BufferPool& operator=(BufferPool&&) noexcept = default;
  ~BufferPool() = default;

  // A free buffer (zeroed once at creation, not on reuse), or nullptr when all
  // are in use.
  std::byte* Acquire();
  // Returns a buffer. InvalidArgument if it is not a buffer start of this pool
  // or is not currently acquired.
  Status Release(std::byte* buffer);

  std::size_t count() const { return count_; }
  std::size_t buffer_size() const { return buffer_size_; }
  std::size_t available() const { return free_.size(); }
  // Buffer i (0 <= i < count), acquired or not.
  std::byte* buffer(std::size_t i) { return base() + i * buffer_size_; }
  // All buffers, contiguous (count * buffer_size bytes).
  std::span<std::byte> region() { return {base(), count_ * buffer_size_}; }

 private:
  struct FreeDeleter {
    void operator()(std::byte* p) const;
  };
  std::byte* base() { return memory_.get(); }

  std::unique_ptr<std::byte, FreeDeleter> memory_;
  std::size_t count_ = 0;
  std::size_t buffer_size_ = 0;
  std::vector<std::uint32_t> free_;   // stack of free buffer indices
  std::vector<std::uint8_t> in_use_;  // per buffer: 1 while acquired
};

// ---------------------------------------------------------------------------
// Write path
// ---------------------------------------------------------------------------

struct AtomicFileWriterOptions {
  // Staging buffer in bytes; data is written in aligned chunks of this size.
  // Multiple of kIoAlignment, 4 KiB .. 256 MiB.
  std::size_t buffer_size = std::size_t{1} << 20;
  // Write with O_DIRECT. Where the filesystem rejects O_DIRECT the writer
  // falls back to buffered writes (fsync still makes them durable); direct()
  // reports which one is in use.
  bool use_direct_io = true;

  Status Validate() const;
};

// Writes a whole file so that it either appears complete at `path` or not at
// all: data goes to a temporary file next to `path`, and Commit() flushes,
// truncates to the exact length, fsyncs, renames onto `path` (replacing any
// file there) and fsyncs the directory. Without a successful Commit() (error,
// early return, destruction) the temporary file is removed and `path` is
// untouched. Appends may have any length; they are staged and written in
// kIoAlignment-aligned chunks. Move-only; thread-compatible.
class AtomicFileWriter {
 public:
  // IOError if the temporary file cannot be created (e.g. missing directory).
  static Result<AtomicFileWriter> Create(const std::string& path,
                                         const AtomicFileWriterOptions& options = {});

  AtomicFileWriter(AtomicFileWriter&& other) noexcept;
  AtomicFileWriter& operator=(AtomicFileWriter&& other) noexcept;
  ~AtomicFileWriter();  // Abort() unless committed

  // Appends bytes. IOError on a failed or short write (the message names the
  // file, offset and errno, e.g. "No space left on device"); after any error
  // every later call returns that error and the file will not be committed.
  Status Append(std::span<const std::byte> data);
  // Makes the file durable and visible at path(); see the class comment.
  Status Commit();
  // Discards the temporary file. Idempotent; no-op after Commit().
  void Abort();

  std::uint64_t size() const { return logical_size_; }  // bytes appended
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  bool direct() const { return direct_; }
  bool committed() const { return committed_; }

 private:
  AtomicFileWriter() = default;
  Status FlushFull();
  Status WriteChunk(const std::byte* data, std::size_t length);
  Status Fail(Status status);

  std::string path_;
  std::string temp_path_;
  int fd_ = -1;               // open temporary file, -1 once closed
  bool temp_exists_ = false;  // the temporary file is on disk and ours to remove
  bool direct_ = false;
  bool committed_ = false;
  Status error_;  // sticky first error
  std::unique_ptr<std::byte, void (*)(void*)> stage_{nullptr, &std::free};
  std::size_t stage_capacity_ = 0;
  std::size_t stage_used_ = 0;
  std::uint64_t file_offset_ = 0;   // bytes already written to the file (aligned)
  std::uint64_t logical_size_ = 0;  // bytes appended by the caller
};

struct PageWriterOptions {
  // Create the file (empty, mode 0644) if it does not exist.
  bool create_if_missing = false;
  // Same O_DIRECT policy as AtomicFileWriterOptions::use_direct_io.
  bool use_direct_io = true;
};

// Random aligned page writes into an existing file (in-place updates, or
// extending a file page by page), made durable by Sync(). Move-only;
// thread-safe for concurrent WriteAt to distinct pages (pwrite).
class PageWriter {
 public:
  // NotFound if the file is missing and !create_if_missing; IOError otherwise.
  static Result<PageWriter> Open(const std::string& path, const PageWriterOptions& options = {});

  PageWriter() = default;
  PageWriter(PageWriter&& other) noexcept;
  PageWriter& operator=(PageWriter&& other) noexcept;
  ~PageWriter();  // closes without syncing

  // Writes data.size() bytes at `offset`. Offset, size and data address must
  // be multiples of kIoAlignment (InvalidArgument otherwise). Writing past the
  // end extends the file. IOError on a failed or short write.
  Status WriteAt(std::uint64_t offset, std::span<const std::byte> data);
  // fsync: every completed WriteAt is durable when this returns OK.
  Status Sync();
  Result<std::uint64_t> Size() const;
  // Closes without syncing; reports close()'s error. Idempotent.
  Status Close();

  const std::string& path() const { return path_; }
  bool direct() const { return direct_; }

 private:
  int fd_ = -1;
  bool direct_ = false;
  std::string path_;
};

// ---------------------------------------------------------------------------
// iobench: random-read benchmark of the engines (the `strata iobench` command)
// ---------------------------------------------------------------------------

struct IobenchOptions {
  std::string path;  // file to read; created / extended as needed
  // Bytes of the file to read from, starting at 0 (rounded down to a multiple
  // of block_size). 0: the existing file's size, or 2 GiB if it must be
  // created. If the file is smaller it is extended with non-zero pseudo-random
  // data written with O_DIRECT and fsync'd.
  std::uint64_t file_size = 0;
  std::uint32_t block_size = 4096;  // bytes per read; multiple of kIoAlignment
  std::vector<std::uint32_t> queue_depths = {1, 4, 16, 64, 128};  // each 1..4096
  std::vector<std::uint32_t> threads = {1};            // reader threads per setting, each 1..256
  std::vector<IoEngine> engines = {IoEngine::kUring};  // kAuto allowed
  double seconds = 5.0;                                // run time per setting, > 0
  std::uint64_t seed = 42;  // offsets are a fixed-seed uniform random sequence

  Status Validate() const;
};

// One (engine, queue depth, threads) measurement.
struct IobenchResult {
  IoEngine engine = IoEngine::kAuto;  // the engine that ran (never kAuto)
  std::string engine_description;     // IoQueue::Describe() of thread 0's queue
  std::uint32_t queue_depth = 0;      // reads kept in flight per thread
  std::uint32_t threads = 0;
  std::uint32_t block_size = 0;
  double seconds = 0;       // measured wall time
  std::uint64_t reads = 0;  // completed reads, all threads
  double iops = 0;          // reads / seconds
  double mbps = 0;          // 10^6 bytes per second
  double mean_us = 0;       // latency from submission to collection, microseconds
  double p50_us = 0;        // (percentiles from a log-linear histogram, < 1% error)
  double p99_us = 0;
  double max_us = 0;
  double cpu_percent = 0;  // process CPU time / wall time * 100 (100 = one core)
  IoStats stats;           // merged over threads
};

// Creates `path` or extends it to at least `size` bytes (multiple of
// kIoAlignment) with non-zero pseudo-random data written with O_DIRECT, then
// fsyncs. Leaves a file that is already large enough untouched.
Status PrepareIobenchFile(const std::string& path, std::uint64_t size);

// Runs one setting; the file must exist with at least options.file_size bytes
// (RunIobench prepares it). Uses only options' path, file_size, block_size,
// seconds and seed.
Result<IobenchResult> RunIobenchSetting(const IobenchOptions& options, IoEngine engine,
                                        std::uint32_t queue_depth, std::uint32_t threads);

// Validates, prepares the file, then runs every engine x threads x
// queue_depths combination in that nesting order, calling `on_result` (if set)
// after each. Stops at the first error.
Result<std::vector<IobenchResult>> RunIobench(
    const IobenchOptions& options,
    const std::function<void(const IobenchResult&)>& on_result = nullptr);

}  // namespace strata

#endif  // STRATA_IO_H_
