// Engine names, option validation and counter merging for the I/O module.
#include <algorithm>
#include <string>

#include "strata/io.h"

namespace strata {

std::string_view IoEngineName(IoEngine engine) {
  switch (engine) {
    case IoEngine::kAuto:
      return "auto";
    case IoEngine::kUring:
      return "uring";
    case IoEngine::kAio:
      return "aio";
    case IoEngine::kPread:
      return "pread";
  }
  return "unknown";
}

Result<IoEngine> ParseIoEngine(std::string_view name) {
  if (name == "auto") return IoEngine::kAuto;
  if (name == "uring" || name == "io_uring") return IoEngine::kUring;
  if (name == "aio" || name == "libaio") return IoEngine::kAio;
  if (name == "pread" || name == "psync") return IoEngine::kPread;
  return Status::InvalidArgument("unknown I/O engine '" + std::string(name) +
                                 "' (expected auto, uring, aio or pread)");
}

Result<std::vector<IoEngine>> ParseIoEngineList(std::string_view text) {
  if (text == "all")
    return std::vector<IoEngine>{IoEngine::kUring, IoEngine::kAio, IoEngine::kPread};
  std::vector<IoEngine> engines;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) {
      return Status::InvalidArgument("empty engine name in '" + std::string(text) + "'");
    }
    STRATA_ASSIGN_OR_RETURN(IoEngine engine, ParseIoEngine(item));
    if (std::find(engines.begin(), engines.end(), engine) != engines.end()) {
      return Status::InvalidArgument("engine '" + std::string(item) + "' listed twice in '" +
                                     std::string(text) + "'");
    }
    engines.push_back(engine);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return engines;
}

void IoStats::Merge(const IoStats& other) {
  reads += other.reads;
  writes += other.writes;
  bytes_read += other.bytes_read;
  bytes_written += other.bytes_written;
  pages_read += other.pages_read;
  pages_written += other.pages_written;
  errors += other.errors;
  submit_batches += other.submit_batches;
  wait_ns += other.wait_ns;
  max_in_flight = std::max(max_in_flight, other.max_in_flight);
}

Status IoQueueOptions::Validate() const {
  if (queue_depth < 1 || queue_depth > 4096) {
    return Status::InvalidArgument("IoQueueOptions.queue_depth must be in 1..4096, got " +
                                   std::to_string(queue_depth));
  }
  if (max_files < 1 || max_files > 65536) {
    return Status::InvalidArgument("IoQueueOptions.max_files must be in 1..65536, got " +
                                   std::to_string(max_files));
  }
  if (pread_threads > 256) {
    return Status::InvalidArgument("IoQueueOptions.pread_threads must be at most 256, got " +
                                   std::to_string(pread_threads));
  }
  return Status::OK();
}

}  // namespace strata
