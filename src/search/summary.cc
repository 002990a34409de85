#include <vector>

#include "base/stats.h"
#include "strata/search.h"

namespace strata {

SearchSummary Summarize(const std::vector<QueryStats>& stats, double seconds) {
  SearchSummary s;
  s.num_queries = stats.size();
  s.seconds = seconds;
  if (stats.empty()) return s;
  s.qps = seconds > 0 ? static_cast<double>(stats.size()) / seconds : 0.0;
  std::vector<double> latency;
  latency.reserve(stats.size());
  double wait = 0, total = 0, drain = 0;
  for (const QueryStats& q : stats) {
    latency.push_back(q.latency_us);
    s.mean_pages_read += q.pages_read;
    s.mean_reads += q.reads;
    s.mean_hops += q.hops;
    s.mean_expanded += q.expanded;
    s.mean_cache_hits += q.cache_hits;
    s.mean_full_distances += q.full_distances;
    s.mean_pq_distances += q.pq_distances;
    s.mean_page_records += q.page_records;
    s.mean_clusters_probed += q.clusters_probed;
    s.mean_survivors += q.survivors;
    s.mean_pages_dropped += q.pages_dropped;
    s.mean_wasted_reads += q.wasted_reads;
    s.mean_reranked += q.reranked;
    drain += q.drain_us;
    wait += q.io_wait_us;
    total += q.latency_us;
  }
  const double n = static_cast<double>(stats.size());
  s.mean_pages_read /= n;
  s.mean_reads /= n;
  s.mean_hops /= n;
  s.mean_expanded /= n;
  s.mean_cache_hits /= n;
  s.mean_full_distances /= n;
  s.mean_pq_distances /= n;
  s.mean_page_records /= n;
  s.mean_clusters_probed /= n;
  s.mean_survivors /= n;
  s.mean_pages_dropped /= n;
  s.mean_wasted_reads /= n;
  s.mean_reranked /= n;
  s.drain_share = total > 0 ? drain / total : 0.0;
  s.mean_io_wait_us = wait / n;
  s.io_wait_share = total > 0 ? wait / total : 0.0;
  s.mean_latency_us = total / n;
  s.p50_latency_us = Percentile(latency, 50);
  s.p99_latency_us = Percentile(latency, 99);
  return s;
}

}  // namespace strata
