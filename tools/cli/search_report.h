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
Result<BatchSearchResult> RunBatch(const Index& index, const VectorMatrix& queries,
                                   const GroundTruth* gt, ReportRow* row);

// JSON object with the keys documented for STATS.json (IVF pipeline columns
// too when the index is an IVF index).
nlohmann::json RowToJson(const ReportRow& row, const Index& index);

// Table header and one row, in the columns that fit the index type (graph:
// L, W; IVF: nprobe, pipeline and seed 003's pipeline columns).
void PrintRowHeader(const Index& index);
void PrintRow(const Index& index, const ReportRow& row);

// CSV header and row, same columns as RowToJson.
std::string CsvHeader();
std::string CsvRow(const ReportRow& row, const Index& index);

}  // namespace strata::cli

#endif  // STRATA_TOOLS_CLI_SEARCH_REPORT_H_
