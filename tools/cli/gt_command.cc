// `strata gt`: exact k-NN ground truth of a query file against a base file.
#include <cstdio>
#include <memory>
#include <string>

#include "command.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/progress.h"

namespace strata::cli {
namespace {

struct GtArgs {
  std::string base, queries, out, metric = "l2";
  std::size_t k = 100;
  unsigned threads = 0;
  std::size_t memory_mb = 1024;
};

Status RunGt(const GtArgs& a) {
  ExactKnnOptions opt;
  opt.k = a.k;
  opt.threads = a.threads;
  opt.base_block_bytes = a.memory_mb << 20;
  STRATA_ASSIGN_OR_RETURN(opt.metric, ParseMetric(a.metric));
  STRATA_RETURN_IF_ERROR(opt.Validate());
  STRATA_ASSIGN_OR_RETURN(DatasetInfo info, GetDatasetInfo(a.base));
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
  cmd->add_option("--memory-mb", args->memory_mb, "Base block size in MiB (bounds memory)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  cmd->callback([args, action] { *action = [args] { return RunGt(*args); }; });
}

}  // namespace strata::cli
