#include "base/thread_affinity.h"

#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <string>

namespace strata {

std::vector<unsigned> CurrentThreadCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<unsigned> out;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (unsigned c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

Status SetCurrentThreadCpus(std::span<const unsigned> cpus) {
  if (cpus.empty()) return Status::InvalidArgument("thread affinity: no CPU given");
  cpu_set_t set;
  CPU_ZERO(&set);
  for (unsigned c : cpus) {
    if (c >= CPU_SETSIZE) {
      return Status::InvalidArgument("thread affinity: CPU " + std::to_string(c) +
                                     " is past the largest CPU number " +
                                     std::to_string(CPU_SETSIZE - 1));
    }
    CPU_SET(c, &set);
  }
  // pid 0: the calling thread only (sched_setaffinity acts on a thread id).
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    const int err = errno;
    if (err == EINVAL) {
      return Status::InvalidArgument("thread affinity: none of the given CPUs is online");
    }
    return Status::FromErrno("thread affinity", err);
  }
  return Status::OK();
}

std::vector<unsigned> CpusAvoiding(std::span<const unsigned> allowed,
                                   std::span<const unsigned> avoid) {
  std::vector<unsigned> out;
  for (unsigned c : allowed) {
    if (std::find(avoid.begin(), avoid.end(), c) == avoid.end()) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace strata
