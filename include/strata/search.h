// Per-query search parameters and counters shared by every index type.
#ifndef STRATA_SEARCH_H_
#define STRATA_SEARCH_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/status.h"

namespace strata {

// Knobs of one query. Graph indexes use list_size and beam_width.
struct SearchParams {
  std::uint32_t k = 10;            // neighbours wanted
  std::uint32_t list_size = 50;    // L: candidate list size (>= k); larger = more recall, more reads
  std::uint32_t beam_width = 4;    // W: node records read per round (1..128)
  // Most nodes expanded per query; 0 means max(4 L, 32) (bounds memory and time).
  std::uint32_t max_expansions = 0;

  // InvalidArgument naming the bad field.
  Status Validate() const;
};

// What one query cost; summed/averaged by the benchmark harness.
struct QueryStats {
  std::uint32_t pages_read = 0;       // 4 KiB sectors read from SSD (O_DIRECT)
  std::uint32_t reads = 0;            // read requests issued
  std::uint32_t hops = 0;             // search rounds (beam iterations)
  std::uint32_t expanded = 0;         // nodes expanded (read or cached)
  std::uint32_t cache_hits = 0;       // expansions served from the in-RAM node cache
  std::uint32_t full_distances = 0;   // exact (full-precision) distance computations
  std::uint32_t pq_distances = 0;     // compressed-code distance computations
  double io_wait_us = 0;              // time blocked waiting for reads
  double latency_us = 0;              // wall time of the whole query
};

// Aggregate of a batch of queries: what `strata search` and `strata bench` report.
struct SearchSummary {
  std::size_t num_queries = 0;
  double seconds = 0;            // wall time of the batch
  double qps = 0;                // num_queries / seconds
  double mean_latency_us = 0;
  double p50_latency_us = 0;
  double p99_latency_us = 0;
  double mean_pages_read = 0;    // 4 KiB sectors per query
  double mean_reads = 0;
  double mean_hops = 0;
  double mean_expanded = 0;
  double mean_cache_hits = 0;
  double mean_full_distances = 0;
  double mean_pq_distances = 0;
  double mean_io_wait_us = 0;
  double io_wait_share = 0;      // sum of I/O wait / sum of latency
};

// Means and latency percentiles over per-query stats of a batch that took
// `seconds` of wall time.
SearchSummary Summarize(const std::vector<QueryStats>& stats, double seconds);

}  // namespace strata

#endif  // STRATA_SEARCH_H_
