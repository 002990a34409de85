// MakeIoQueue: engine selection with run-time fallback. io_uring can be
// missing (old kernel), disabled (kernel.io_uring_disabled) or blocked by a
// seccomp filter (ENOSYS / EPERM); each is only discovered by trying.
#include <string>

#include "io/backends.h"

namespace strata {

Result<std::unique_ptr<IoQueue>> MakeIoQueue(const IoQueueOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  switch (options.engine) {
    case IoEngine::kUring:
      return io_internal::MakeUringQueue(options);
    case IoEngine::kAio:
      return io_internal::MakeAioQueue(options);
    case IoEngine::kPread:
      return io_internal::MakePreadQueue(options);
    case IoEngine::kAuto:
      break;
  }
  std::string reasons;
  for (auto make : {io_internal::MakeUringQueue, io_internal::MakeAioQueue}) {
    Result<std::unique_ptr<IoQueue>> queue = make(options);
    if (queue.ok()) return queue;
    if (!queue.status().IsNotSupported()) return queue.status();
    reasons += queue.status().message() + "; ";
  }
  Result<std::unique_ptr<IoQueue>> queue = io_internal::MakePreadQueue(options);
  if (!queue.ok()) return queue.status().WithContext(reasons + "no I/O engine available");
  return queue;
}

Status ProbeIoEngine(IoEngine engine) {
  if (engine == IoEngine::kAuto) {
    return Status::InvalidArgument("ProbeIoEngine: name an engine, not auto");
  }
  IoQueueOptions options;
  options.engine = engine;
  options.queue_depth = 1;
  options.max_files = 1;
  options.pread_threads = 1;
  Result<std::unique_ptr<IoQueue>> queue = MakeIoQueue(options);
  return queue.ok() ? Status::OK() : queue.status();
}

}  // namespace strata
