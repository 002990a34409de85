// `strata info`: shape, type, size and a sanity summary of any supported file.
#include <cstdio>
#include <memory>
#include <string>

#include "command.h"
#include "strata/dataset.h"
#include "strata/distance.h"

namespace strata::cli {
namespace {

struct InfoArgs {
  std::string file;
  std::uint64_t sample = 20000;
};

Status RunInfo(const InfoArgs& a) {
  STRATA_ASSIGN_OR_RETURN(DatasetInfo info, GetDatasetInfo(a.file));
  std::printf("%s\n  %s\n", a.file.c_str(), info.ToString().c_str());
  if (info.ground_truth) {
    STRATA_ASSIGN_OR_RETURN(GroundTruth gt, ReadGroundTruth(a.file));
    std::printf("  ground truth: %llu queries x %u neighbours, %s distances\n",
                static_cast<unsigned long long>(gt.num_queries), gt.k,
                gt.distances.empty() ? "without" : "with");
    if (!gt.distances.empty() && gt.num_queries > 0) {
      std::printf("  query 0: nearest id %llu at %.6g, k-th at %.6g\n",
                  static_cast<unsigned long long>(gt.ids[0]), gt.distances[0],
                  gt.distances[gt.k - 1]);
    }
    return Status::OK();
  }
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(a.file));
  SummaryOptions so;
  so.max_rows = a.sample;
  STRATA_ASSIGN_OR_RETURN(DatasetSummary summary, reader->Summarize(so));
  std::printf("%s\n", summary.ToString().c_str());
  std::printf("  distance kernels: %s\n", std::string(ActiveIsaName()).c_str());
  return Status::OK();
}

}  // namespace

void AddInfoCommand(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = root.add_subcommand("info", "Describe a vector or ground-truth file");
  cmd->add_option("file", args->file, "File to describe")->required();
  cmd->add_option("--sample", args->sample, "Rows to sample for the summary")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->callback([args, action] { *action = [args] { return RunInfo(*args); }; });
}

}  // namespace strata::cli
