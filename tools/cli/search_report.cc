#include "search_report.h"

namespace strata::cli {

Result<BatchSearchResult> RunBatch(const GraphIndex& index, const VectorMatrix& queries,
                                   const GroundTruth* gt, ReportRow* row) {
  STRATA_ASSIGN_OR_RETURN(BatchSearchResult r,
                          SearchBatch(index, queries, row->params, row->threads));
  row->summary = Summarize(r.stats, r.seconds);
  if (gt != nullptr) {
    STRATA_ASSIGN_OR_RETURN(RecallReport rec, ComputeRecall(r.results, *gt, row->params.k));
    row->recall = rec.mean_recall;
  }
  return r;
}

nlohmann::json RowToJson(const ReportRow& row, const GraphIndex& index) {
  const SearchSummary& s = row.summary;
  nlohmann::json j = {{"k", row.params.k},
                      {"L", row.params.list_size},
                      {"beamwidth", row.params.beam_width},
                      {"threads", row.threads},
                      {"num_queries", s.num_queries},
                      {"qps", s.qps},
                      {"mean_latency_us", s.mean_latency_us},
                      {"p50_latency_us", s.p50_latency_us},
                      {"p99_latency_us", s.p99_latency_us},
                      {"mean_pages_read", s.mean_pages_read},
                      {"mean_reads", s.mean_reads},
                      {"mean_hops", s.mean_hops},
                      {"mean_expanded", s.mean_expanded},
                      {"mean_cache_hits", s.mean_cache_hits},
                      {"mean_full_distances", s.mean_full_distances},
                      {"mean_pq_distances", s.mean_pq_distances},
                      {"mean_io_wait_us", s.mean_io_wait_us},
                      {"io_wait_share", s.io_wait_share},
                      {"cache_nodes", index.cached_nodes()},
                      {"index_memory_bytes", index.memory_bytes()}};
  if (row.recall) j["recall_at_k"] = *row.recall;
  return j;
}

}  // namespace strata::cli
