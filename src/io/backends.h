// Factories of the IoQueue backends, one file each (uring_queue.cc,
// aio_queue.cc, pread_queue.cc). Internal to src/io/: callers use
// MakeIoQueue() from strata/io.h, which picks among these.
#ifndef STRATA_IO_BACKENDS_H_
#define STRATA_IO_BACKENDS_H_

#include <memory>

#include "strata/io.h"

namespace strata::io_internal {

// Each returns NotSupported (with the kernel's reason) when the mechanism
// cannot be set up in this process, so MakeIoQueue can fall back. `options`
// has been validated.
Result<std::unique_ptr<IoQueue>> MakeUringQueue(const IoQueueOptions& options);
Result<std::unique_ptr<IoQueue>> MakeAioQueue(const IoQueueOptions& options);
Result<std::unique_ptr<IoQueue>> MakePreadQueue(const IoQueueOptions& options);

}  // namespace strata::io_internal

#endif  // STRATA_IO_BACKENDS_H_
