// LatencyHistogram: fixed-memory log-linear histogram of durations in
// nanoseconds, for benchmarks that record millions of I/O latencies without
// allocating while they run (the HdrHistogram idea, reduced to what iobench
// needs).
//
// Values below 256 ns are kept exactly; above, each power of two is split into
// 128 equal buckets, so a reported percentile is within 0.4% of a recorded
// value (bucket midpoint, relative width <= 1/128). Values are clamped at
// 2^40 ns (~18 minutes). Count, mean, min and max are exact.
//
// Thread-compatible; merge per-thread histograms with Merge().
#ifndef STRATA_IO_LATENCY_HISTOGRAM_H_
#define STRATA_IO_LATENCY_HISTOGRAM_H_

#include <cstdint>
#include <vector>

namespace strata {

class LatencyHistogram {
 public:
  LatencyHistogram();

  // Adds one duration in nanoseconds.
  void Record(std::uint64_t ns) {
    ++counts_[BucketOf(ns)];
    ++count_;
    sum_ += ns;
    if (ns < min_) min_ = ns;
    if (ns > max_) max_ = ns;
  }
  // Adds all of `other`'s values.
  void Merge(const LatencyHistogram& other);

  std::uint64_t count() const { return count_; }
  // Exact mean in nanoseconds; 0 when empty.
  double Mean() const { return count_ == 0 ? 0.0 : static_cast<double>(sum_) / count_; }
  std::uint64_t Min() const { return count_ == 0 ? 0 : min_; }
  std::uint64_t Max() const { return max_; }
  // Nearest-rank p-th percentile (p in [0, 100]) in nanoseconds, as the
  // midpoint of its bucket clamped to [Min(), Max()]; 0 when empty.
  double Percentile(double p) const;

  // Bucket arithmetic, exposed for tests.
  static std::uint32_t BucketOf(std::uint64_t ns);
  static std::uint64_t BucketLow(std::uint32_t bucket);   // smallest value in bucket
  static std::uint64_t BucketHigh(std::uint32_t bucket);  // largest value in bucket
  static std::uint32_t NumBuckets();

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = UINT64_MAX;
  std::uint64_t max_ = 0;
};

}  // namespace strata

#endif  // STRATA_IO_LATENCY_HISTOGRAM_H_
