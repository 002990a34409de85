// `strata gen`: deterministic clustered synthetic data plus its exact ground truth.
#include <cstdio>
#include <memory>
#include <string>

#include "command.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/progress.h"

namespace strata::cli {
namespace {

struct GenArgs {
  std::string out;
  std::uint64_t n = 0;
  std::uint32_t dim = 0;
  std::uint64_t queries = 1000;
  std::string metric = "l2";
  std::uint64_t seed = 7;
  std::string type = "float";
  std::uint32_t gt_k = 100;
  unsigned threads = 0;
};

std::string Extension(ElementType t) {
  switch (t) {
    case ElementType::kUint8: return ".u8bin";
    case ElementType::kInt8: return ".i8bin";
    case ElementType::kFloat16: return ".npy";
    default: return ".fbin";
  }
}

Status RunGen(const GenArgs& a) {
  SyntheticOptions opt;
  opt.num_base = a.n;
  opt.dim = a.dim;
  opt.num_queries = a.queries;
  opt.seed = a.seed;
  opt.threads = a.threads;
  STRATA_ASSIGN_OR_RETURN(opt.metric, ParseMetric(a.metric));
  STRATA_ASSIGN_OR_RETURN(opt.element_type, ParseElementType(a.type));
  STRATA_RETURN_IF_ERROR(opt.Validate());
  if (a.queries == 0) return Status::InvalidArgument("--queries must be at least 1");
  const std::string ext = Extension(opt.element_type);
  const std::string base_path = a.out + "_base" + ext;
  const std::string query_path = a.out + "_query" + ext;
  const std::string gt_path = a.out + "_gt.ibin";
  std::fprintf(stderr, "generating %llu x %u base and %llu queries (%s, %s, seed %llu)\n",
               static_cast<unsigned long long>(a.n), a.dim,
               static_cast<unsigned long long>(a.queries), std::string(MetricName(opt.metric)).c_str(),
               std::string(ElementTypeName(opt.element_type)).c_str(),
               static_cast<unsigned long long>(a.seed));
  STRATA_RETURN_IF_ERROR(WriteSynthetic(opt, base_path, query_path));

  ExactKnnOptions gt_opt;
  gt_opt.k = std::min<std::uint64_t>(a.gt_k, a.n);
  gt_opt.metric = opt.metric;
  gt_opt.threads = a.threads;
  ProgressBar bar("gt", a.n);
  std::uint64_t last = 0;
  STRATA_ASSIGN_OR_RETURN(GroundTruth gt,
                          ComputeGroundTruth(base_path, query_path, gt_opt,
                                             [&](std::uint64_t done, std::uint64_t) {
                                               bar.Add(done - last);
                                               last = done;
                                             }));
  bar.Finish();
  STRATA_RETURN_IF_ERROR(WriteGroundTruth(gt_path, gt));
  std::printf("wrote %s\nwrote %s\nwrote %s (k = %u)\n", base_path.c_str(), query_path.c_str(),
              gt_path.c_str(), gt.k);
  return Status::OK();
}

}  // namespace

void AddGenCommand(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<GenArgs>();
  CLI::App* cmd = root.add_subcommand(
      "gen", "Generate deterministic clustered synthetic data with exact ground truth (k = 100)");
  cmd->add_option("--out", args->out, "Output prefix: writes PREFIX_base, PREFIX_query, PREFIX_gt.ibin")
      ->required();
  cmd->add_option("--n", args->n, "Number of base vectors")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--dim", args->dim, "Dimension")->required()->check(CLI::Range(1, 65536));
  cmd->add_option("--queries", args->queries, "Number of query vectors")->capture_default_str();
  cmd->add_option("--metric", args->metric, "l2, ip or cosine (cosine normalises rows)")
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Random seed")->capture_default_str();
  cmd->add_option("--type", args->type, "Element type: float, uint8 or int8")->capture_default_str();
  cmd->add_option("--gt-k", args->gt_k, "Neighbours per query in the ground truth")
      ->capture_default_str()
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--threads", args->threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->callback([args, action] { *action = [args] { return RunGen(*args); }; });
}

}  // namespace strata::cli
