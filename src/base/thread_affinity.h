// The CPUs a thread may run on (Linux sched_setaffinity), for background
// work that must keep off some CPUs (io/interrupt_cpus.h says why).
#ifndef STRATA_BASE_THREAD_AFFINITY_H_
#define STRATA_BASE_THREAD_AFFINITY_H_

#include <span>
#include <vector>

#include "strata/status.h"

namespace strata {

// The CPUs the calling thread may run on, in increasing order.
std::vector<unsigned> CurrentThreadCpus();

// Restricts the calling thread to `cpus`; threads it creates afterwards
// inherit the mask. InvalidArgument when `cpus` is empty or names no CPU
// the system has.
Status SetCurrentThreadCpus(std::span<const unsigned> cpus);

// `allowed` without `avoid`, in increasing order; empty when that would
// leave no CPU (then nothing is worth avoiding).
std::vector<unsigned> CpusAvoiding(std::span<const unsigned> allowed,
                                   std::span<const unsigned> avoid);

}  // namespace strata

#endif  // STRATA_BASE_THREAD_AFFINITY_H_
