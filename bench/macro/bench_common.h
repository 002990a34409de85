// Helpers shared by the macro benchmarks (bench/macro/*.cc): timing, the
// machine's load and the process's memory and I/O, percentiles, and dying
// with a status. Header-only: each benchmark is one executable.
#ifndef STRATA_BENCH_MACRO_BENCH_COMMON_H_
#define STRATA_BENCH_MACRO_BENCH_COMMON_H_

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "strata/collection.h"
#include "strata/eval.h"
#include "strata/status.h"

namespace strata::bench {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

[[noreturn]] inline void Die(const std::string& what, const Status& st) {
  std::cerr << "bench: " << what << ": " << st.ToString() << "\n";
  std::exit(1);
}
inline void Check(const Status& st, const std::string& what) {
  if (!st.ok()) Die(what, st);
}

// /proc/loadavg's three averages, as one string.
inline std::string LoadAvg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

inline double PeakRssMiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is KiB on Linux
}

// Bytes this process has caused to be sent to storage (/proc/self/io
// write_bytes: O_DIRECT writes, and page-cache writes as they are flushed;
// 0 where the kernel does not account I/O).
inline std::uint64_t ProcessWriteBytes() {
  std::ifstream f("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (f >> key >> value) {
    if (key == "write_bytes:") return value;
  }
  return 0;
}

// A "Name:   123 kB" line of /proc/self/status, in bytes (0 if absent).
inline std::uint64_t ProcStatusBytes(const std::string& name) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(name + ":", 0) == 0) {
      std::istringstream in(line.substr(name.size() + 1));
      std::uint64_t kib = 0;
      in >> kib;
      return kib * 1024;
    }
  }
  return 0;
}
inline std::uint64_t RssBytes() { return ProcStatusBytes("VmRSS"); }

// Bytes this process has caused to be read from block devices
// (/proc/self/io read_bytes: O_DIRECT reads included, page-cache hits not).
inline std::uint64_t DeviceReadBytes() {
  std::ifstream f("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (f >> key >> value) {
    if (key == "read_bytes:") return value;
  }
  return 0;
}

inline double ProcessCpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

// Waits until the process's background threads (the pending-graph indexer,
// RocksDB compactions) are idle: CPU time grows < 0.05 s over 1 s, twice in a
// row (or max_s passes). Returns the seconds waited.
inline double WaitIdle(double max_s = 900) {
  const auto t0 = Clock::now();
  int quiet = 0;
  double last = ProcessCpuSeconds();
  while (quiet < 2 && Seconds(t0, Clock::now()) < max_s) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double now = ProcessCpuSeconds();
    quiet = (now - last < 0.05) ? quiet + 1 : 0;
    last = now;
  }
  return Seconds(t0, Clock::now());
}

// The p-quantile (0..1) of v, nearest rank.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t i = std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5));
  return v[i];
}

// Mean recall@k of collection search results against `gt` (missing hits
// count as misses; ties by gt distance, see strata/eval.h).
inline double RecallAtK(const std::vector<std::vector<SearchHit>>& res, const GroundTruth& gt,
                        std::uint32_t k) {
  GroundTruth r;
  r.num_queries = res.size();
  r.k = k;
  r.ids.assign(res.size() * k, kInvalidVectorId);
  r.distances.assign(res.size() * k, std::numeric_limits<float>::infinity());
  for (std::size_t q = 0; q < res.size(); ++q) {
    for (std::size_t i = 0; i < res[q].size() && i < k; ++i) {
      r.ids[q * k + i] = res[q][i].id;
      r.distances[q * k + i] = res[q][i].distance;
    }
  }
  auto rep = ComputeRecall(r, gt, k);
  if (!rep.ok()) Die("recall", rep.status());
  return rep.value().mean_recall;
}

}  // namespace strata::bench

#endif  // STRATA_BENCH_MACRO_BENCH_COMMON_H_
