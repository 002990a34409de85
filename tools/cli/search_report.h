// Shared by `strata search` and `strata bench`: running a batch of queries on
// an index and turning it into a report row (recall, QPS, latency, pages).
#ifndef STRATA_TOOLS_CLI_SEARCH_REPORT_H_
#define STRATA_TOOLS_CLI_SEARCH_REPORT_H_

#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "strata/eval.h"
#include "strata/index.h"
#include "strata/labels.h"
#include "strata/search.h"

namespace strata::cli {

struct ReportRow {
  SearchParams params;
  unsigned threads = 1;
  SearchSummary summary;
  std::optional<double> recall;  // when ground truth was given
};

// Graph technique flags shared by `search` and `bench`: a profile, then any
// switch given explicitly.
struct GraphSearchFlags {
  std::string profile = "default";
  std::optional<bool> mem_graph, page_search, dynamic_width, pipelined;
  std::optional<std::uint32_t> mem_graph_L, min_beam_width, rerank_group;
};
void AddGraphSearchFlags(CLI::App* cmd, GraphSearchFlags* flags);
Status ApplyGraphSearchFlags(const GraphSearchFlags& flags, SearchParams* params);

// How `search` and `bench` open an index: node cache and code placement.
struct OpenFlags {
  std::uint64_t cache_nodes = 0;
  std::uint64_t cache_mib = 0;
  std::string cache_policy = "bfs";
  std::uint32_t warmup_queries = 1000;
  bool resident_codes = false;
  std::string engine = "auto";
  std::string decoupled;
  std::string edge_cache_policy = "lfu";
};
void AddOpenFlags(CLI::App* cmd, OpenFlags* flags);
Result<OpenOptions> ToOpenOptions(const OpenFlags& flags);

// Filtered search by labels (`--base-labels`, `--query-labels`): query q
// may return only the base rows that carry every label of its row.
struct LabelFlags {
  std::string base_labels, query_labels;
  // Queries passed by at most this many rows rank only those rows
  // (SearchParams::restrict_to); -1: max(4096, rows / 20); 0: never.
  std::int64_t exact_scan_limit = -1;
};
void AddLabelFlags(CLI::App* cmd, LabelFlags* flags);
class QueryLabelFilters {
 public:
  // Empty flags: no filter (filter_of() is null). InvalidArgument when only
  // one is given or the row counts differ from the index's / the queries'.
  static Result<std::unique_ptr<QueryLabelFilters>> Load(const LabelFlags& flags,
                                                         const Index& index,
                                                         std::size_t num_queries);
  // Sets each query's filter, filter_fraction and, where few rows pass,
  // restrict_to, else (where they were listed) entry_rows.
  QueryParamsFn params_of() const;
  // Queries given a restrict_to list.
  std::size_t restricted_queries() const;

 private:
  LabelSets base_, queries_;
  std::vector<LabelFilter> filters_;
  std::vector<std::optional<std::vector<std::uint64_t>>> passing_;  // per query
  // Per query: the fraction of rows that pass (exact where they were listed,
  // else the rarest label's), and a sample of the passing rows to start the
  // walk from when there were too many to scan.
  std::vector<float> fraction_;
  std::vector<std::vector<std::uint64_t>> entry_rows_;
  // Per query: a walk steered by the filter from the queried labels' start
  // rows (an index built with labels, GraphBuildOptions::labels).
  std::vector<bool> steered_;
};

// Runs `queries` through `index`; fills row.summary and, if `gt` is set, recall@k.
Result<BatchSearchResult> RunBatch(const Index& index, const VectorMatrix& queries,
                                   const GroundTruth* gt, ReportRow* row,
                                   const QueryParamsFn& params_of = nullptr);

// JSON object with the keys documented for STATS.json (IVF pipeline columns
// too when the index is an IVF index).
nlohmann::json RowToJson(const ReportRow& row, const Index& index);

// Table header and one row, in the columns that fit the index type (graph:
// L, W; IVF: nprobe, pipeline and RaBitQ-SSD's pipeline columns).
void PrintRowHeader(const Index& index);
void PrintRow(const Index& index, const ReportRow& row);

// CSV header and row, same columns as RowToJson.
std::string CsvHeader();
std::string CsvRow(const ReportRow& row, const Index& index);

}  // namespace strata::cli

#endif  // STRATA_TOOLS_CLI_SEARCH_REPORT_H_
