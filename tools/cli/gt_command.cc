// `strata gt`: exact k-NN ground truth of a query file against a base file,
// optionally filtered: by labels (a base row passes a query when it carries
// every label of that query's row, the NeurIPS'23 filter track's rule) and/or
// by one Qdrant payload filter for all queries, evaluated on per-row payloads
// (a JSON-lines file, or {"labels": [...]} made from the base labels).
#include <cstdio>
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collection_io.h"
#include "command.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/filter.h"
#include "strata/labels.h"
#include "strata/progress.h"

namespace strata::cli {
namespace {

struct GtArgs {
  std::string base, queries, out, metric = "l2";
  std::string base_labels, query_labels, base_payloads, filter;
  std::size_t k = 100;
  unsigned threads = 0;
  std::size_t memory_mb = 1024;
};

// Which base rows pass `filter`: each row's payload from `payloads_path`
// (JSON lines) or, without one, {"labels": [...]} of `labels`.
Result<std::vector<bool>> RowsPassing(const PayloadFilter& filter, std::uint64_t rows,
                                      const std::string& payloads_path, const LabelSets* labels) {
  std::vector<bool> pass(rows);
  if (!payloads_path.empty()) {
    STRATA_ASSIGN_OR_RETURN(auto reader, PayloadReader::Open(payloads_path));
    if (reader->lines() != rows) {
      return Status::InvalidArgument("--base-payloads: " + payloads_path + " has " +
                                     std::to_string(reader->lines()) + " lines, the base " +
                                     std::to_string(rows) + " rows");
    }
    std::vector<std::string> chunk;
    for (std::uint64_t begin = 0; begin < rows; begin += chunk.size()) {
      STRATA_RETURN_IF_ERROR(reader->Next(std::min<std::uint64_t>(65536, rows - begin), &chunk));
      for (std::size_t i = 0; i < chunk.size(); ++i) {
        pass[begin + i] = filter.Matches(begin + i, chunk[i]);
      }
    }
    return pass;
  }
  std::string payload;
  for (std::uint64_t i = 0; i < rows; ++i) {
    payload = "{\"labels\":[";
    if (labels != nullptr) {
      const auto row = labels->row(i);
      for (std::size_t j = 0; j < row.size(); ++j) {
        if (j > 0) payload += ',';
        payload += std::to_string(row[j]);
      }
    }
    payload += "]}";
    pass[i] = filter.Matches(i, payload);
  }
  return pass;
}

Status RunGt(const GtArgs& a) {
  ExactKnnOptions opt;
  opt.k = a.k;
  opt.threads = a.threads;
  opt.base_block_bytes = a.memory_mb << 20;
  STRATA_ASSIGN_OR_RETURN(opt.metric, ParseMetric(a.metric));
  STRATA_RETURN_IF_ERROR(opt.Validate());
  STRATA_ASSIGN_OR_RETURN(DatasetInfo info, GetDatasetInfo(a.base));
  if (!a.query_labels.empty() && a.base_labels.empty()) {
    return Status::InvalidArgument("--query-labels needs --base-labels");
  }
  std::optional<LabelSets> base_labels, query_labels;
  if (!a.base_labels.empty()) {
    STRATA_ASSIGN_OR_RETURN(base_labels, ReadLabels(a.base_labels));
    if (base_labels->rows() != info.rows) {
      return Status::InvalidArgument("--base-labels: " + a.base_labels + " has " +
                                     std::to_string(base_labels->rows()) + " rows, " + a.base +
                                     " " + std::to_string(info.rows));
    }
  }
  if (!a.query_labels.empty()) {
    STRATA_ASSIGN_OR_RETURN(DatasetInfo qinfo, GetDatasetInfo(a.queries));
    STRATA_ASSIGN_OR_RETURN(query_labels, ReadLabels(a.query_labels));
    if (query_labels->rows() != qinfo.rows) {
      return Status::InvalidArgument("--query-labels: " + a.query_labels + " has " +
                                     std::to_string(query_labels->rows()) + " rows, " +
                                     a.queries + " " + std::to_string(qinfo.rows));
    }
  }
  std::vector<bool> pass;
  if (!a.filter.empty()) {
    STRATA_ASSIGN_OR_RETURN(PayloadFilter filter, ParseFilterArgument(a.filter));
    STRATA_ASSIGN_OR_RETURN(pass, RowsPassing(filter, info.rows, a.base_payloads,
                                              base_labels ? &*base_labels : nullptr));
  } else if (!a.base_payloads.empty()) {
    return Status::InvalidArgument("--base-payloads is only read for --filter");
  }
  if (query_labels || !pass.empty()) {
    const LabelSets* bl = base_labels ? &*base_labels : nullptr;
    const LabelSets* ql = query_labels ? &*query_labels : nullptr;
    opt.accept = [bl, ql, &pass](std::size_t q, VectorId id) {
      if (!pass.empty() && !pass[id]) return false;
      return ql == nullptr || bl->HasAll(id, ql->row(q));
    };
  }
  ProgressBar bar("gt", info.rows);
  std::uint64_t last = 0;
  STRATA_ASSIGN_OR_RETURN(GroundTruth gt,
                          ComputeGroundTruth(a.base, a.queries, opt,
                                             [&](std::uint64_t done, std::uint64_t) {
                                               bar.Add(done - last);
                                               last = done;
                                             }));
  bar.Finish();
  STRATA_RETURN_IF_ERROR(WriteGroundTruth(a.out, gt));
  std::printf("wrote %s: %llu queries x %u neighbours (%s)\n", a.out.c_str(),
              static_cast<unsigned long long>(gt.num_queries), gt.k,
              std::string(MetricName(opt.metric)).c_str());
  if (opt.accept) {
    std::uint64_t short_rows = 0;
    for (std::size_t q = 0; q < gt.num_queries; ++q) {
      short_rows += gt.ids[q * gt.k + gt.k - 1] == kInvalidVectorId ? 1 : 0;
    }
    std::printf("filtered: %llu queries have fewer than %u passing rows (tail written as the "
                "missing-result sentinel)\n",
                static_cast<unsigned long long>(short_rows), gt.k);
  }
  return Status::OK();
}

}  // namespace

void AddGtCommand(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<GtArgs>();
  CLI::App* cmd = root.add_subcommand("gt", "Compute exact k-NN ground truth (.ibin or .ivecs)");
  cmd->add_option("--base", args->base, "Base vectors (.fbin .u8bin .i8bin .fvecs .bvecs .npy)")
      ->required();
  cmd->add_option("--queries", args->queries, "Query vectors (same dimension)")->required();
  cmd->add_option("--k", args->k, "Neighbours per query")->capture_default_str()->check(
      CLI::Range(1, 65536));
  cmd->add_option("--metric", args->metric, "l2, ip or cosine")->capture_default_str();
  cmd->add_option("--out", args->out, "Output ground truth file (.ibin or .ivecs)")->required();
  cmd->add_option("--threads", args->threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--base-labels", args->base_labels,
                  "Labels of the base rows: DiskANN label file (line i: comma-separated integer "
                  "labels of row i) or big-ann-benchmarks .spmat");
  cmd->add_option("--query-labels", args->query_labels,
                  "Labels of each query (same formats): a base row is a candidate only if it "
                  "carries all of them (NeurIPS'23 filter track); needs --base-labels");
  cmd->add_option("--filter", args->filter,
                  "One Qdrant payload filter (JSON or @FILE) for every query, on the payloads "
                  "of --base-payloads, or on {\"labels\": [...]} from --base-labels");
  cmd->add_option("--base-payloads", args->base_payloads,
                  "Payloads of the base rows for --filter: JSON lines, line i for row i");
  cmd->add_option("--memory-mb", args->memory_mb, "Base block size in MiB (bounds memory)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->callback([args, action] { *action = [args] { return RunGt(*args); }; });
}

}  // namespace strata::cli
