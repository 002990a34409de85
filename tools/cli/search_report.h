// Shared by `strata search` and `strata bench`: running a batch of queries on
// an index and turning it into a report row (recall, QPS, latency, pages).
#ifndef STRATA_TOOLS_CLI_SEARCH_REPORT_H_
#define STRATA_TOOLS_CLI_SEARCH_REPORT_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "strata/eval.h"
#include "strata/index.h"
#include "strata/search.h"

namespace strata::cli {

struct ReportRow {
  SearchParams params;
  unsigned threads = 1;
  SearchSummary summary;
  std::optional<double> recall;  // when ground truth was given
};

// Runs `queries` through `index`; fills row.summary and, if `gt` is set, recall@k.
Result<BatchSearchResult> RunBatch(const GraphIndex& index, const VectorMatrix& queries,
                                   const GroundTruth* gt, ReportRow* row);

// JSON object with the keys documented for STATS.json.
nlohmann::json RowToJson(const ReportRow& row, const GraphIndex& index);

}  // namespace strata::cli

#endif  // STRATA_TOOLS_CLI_SEARCH_REPORT_H_
