#include "io/latency_histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace strata {
namespace {

constexpr int kSubBits = 8;                         // 2^8 exact values, then 2^7 per octave
constexpr std::uint64_t kExact = 1ull << kSubBits;  // 256
constexpr std::uint64_t kHalf = kExact / 2;         // 128 buckets per power of two
constexpr int kMaxBits = 40;                        // clamp at 2^40 ns
constexpr std::uint64_t kMaxValue = (1ull << kMaxBits) - 1;

}  // namespace

// Layout: buckets [0, 256) hold values 0..255. A value v >= 256 with highest
// set bit b is shifted right by s = b - 7 so that its top 8 bits t lie in
// [128, 256); its bucket is 256 + (s - 1) * 128 + (t - 128).
std::uint32_t LatencyHistogram::BucketOf(std::uint64_t ns) {
  if (ns < kExact) return static_cast<std::uint32_t>(ns);
  ns = std::min(ns, kMaxValue);
  const int msb = 63 - std::countl_zero(ns);
  const int shift = msb - (kSubBits - 1);
  const std::uint64_t top = ns >> shift;
  return static_cast<std::uint32_t>(kExact + static_cast<std::uint64_t>(shift - 1) * kHalf +
                                    (top - kHalf));
}

std::uint64_t LatencyHistogram::BucketLow(std::uint32_t bucket) {
  if (bucket < kExact) return bucket;
  const std::uint64_t rel = bucket - kExact;
  const int shift = static_cast<int>(rel / kHalf) + 1;
  const std::uint64_t top = kHalf + rel % kHalf;
  return top << shift;
}

std::uint64_t LatencyHistogram::BucketHigh(std::uint32_t bucket) {
  if (bucket < kExact) return bucket;
  const std::uint64_t rel = bucket - kExact;
  const int shift = static_cast<int>(rel / kHalf) + 1;
  return BucketLow(bucket) + (1ull << shift) - 1;
}

std::uint32_t LatencyHistogram::NumBuckets() { return BucketOf(kMaxValue) + 1; }

LatencyHistogram::LatencyHistogram() : counts_(NumBuckets(), 0) {}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  min_ = std::min(min_, other.min_);
  max_ = std::max(max_, other.max_);
}

double LatencyHistogram::Percentile(double p) const {
  if (count_ == 0) return 0.0;
  p = std::clamp(p, 0.0, 100.0);
  // Nearest rank: the smallest value with at least p% of values <= it.
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(p / 100.0 * static_cast<double>(count_))));
  if (rank >= count_) return static_cast<double>(max_);  // exact, not a bucket midpoint
  std::uint64_t seen = 0;
  for (std::uint32_t b = 0; b < counts_.size(); ++b) {
    seen += counts_[b];
    if (seen >= rank) {
      const double mid =
          0.5 * (static_cast<double>(BucketLow(b)) + static_cast<double>(BucketHigh(b)));
      return std::clamp(mid, static_cast<double>(Min()), static_cast<double>(max_));
    }
  }
  return static_cast<double>(max_);
}

}  // namespace strata
