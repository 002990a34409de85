// Summary statistics for latency and per-query counters: mean and percentiles.
#ifndef STRATA_BASE_STATS_H_
#define STRATA_BASE_STATS_H_

#include <cstddef>
#include <vector>

namespace strata {

// Returns the p-th percentile (p in [0, 100]) of `values` by linear
// interpolation between closest ranks; 0 for an empty input. Sorts a copy.
double Percentile(std::vector<double> values, double p);
double Mean(const std::vector<double>& values);

// Peak resident set size of this process in bytes (VmHWM), 0 if unknown.
std::size_t PeakRssBytes();
// Current resident set size in bytes (VmRSS), 0 if unknown.
std::size_t CurrentRssBytes();

}  // namespace strata

#endif  // STRATA_BASE_STATS_H_
