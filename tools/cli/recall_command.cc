// `strata recall`: recall@k of a results file against ground truth (tie-aware).
#include <cstdio>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "command.h"
#include "strata/dataset.h"
#include "strata/eval.h"

namespace strata::cli {
namespace {

struct RecallArgs {
  std::string results, gt;
  std::size_t k = 10;
  bool json = false;
};

Status RunRecall(const RecallArgs& a) {
  STRATA_ASSIGN_OR_RETURN(GroundTruth results, ReadGroundTruth(a.results));
  STRATA_ASSIGN_OR_RETURN(GroundTruth gt, ReadGroundTruth(a.gt));
  STRATA_ASSIGN_OR_RETURN(RecallReport r, ComputeRecall(results, gt, a.k));
  if (a.json) {
    nlohmann::json j = {{"k", r.k},
                        {"num_queries", r.num_queries},
                        {"recall_at_k", r.mean_recall},
                        {"min_recall", r.min_recall},
                        {"results", a.results},
                        {"gt", a.gt}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("recall@%zu = %.4f over %zu queries (worst query %.2f)\n", r.k, r.mean_recall,
                r.num_queries, r.min_recall);
  }
  return Status::OK();
}

}  // namespace

void AddRecallCommand(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<RecallArgs>();
  CLI::App* cmd = root.add_subcommand("recall", "Recall@k of search results against ground truth");
  cmd->add_option("--results", args->results, "Results file (.ibin: ids and distances)")
      ->required();
  cmd->add_option("--gt", args->gt, "Ground truth file (.ibin or .ivecs)")->required();
  cmd->add_option("--k", args->k, "k of recall@k")->capture_default_str()->check(
      CLI::Range(1, 65536));
  cmd->add_flag("--json", args->json, "Print a JSON object");
  cmd->callback([args, action] { *action = [args] { return RunRecall(*args); }; });
}

}  // namespace strata::cli
