// `strata build`: builds an SSD-resident index from a vector file.
#include <cstdio>
#include <memory>
#include <string>

#include "command.h"
#include "strata/graph_index.h"
#include "strata/progress.h"

namespace strata::cli {
namespace {

struct BuildArgs {
  std::string type = "graph";
  std::string base, index, metric = "l2";
  GraphBuildOptions graph;
};

Status RunBuild(BuildArgs a) {
  if (a.type != "graph") {
    return Status::NotSupported("index type '" + a.type + "' (available: graph)");
  }
  STRATA_ASSIGN_OR_RETURN(a.graph.metric, ParseMetric(a.metric));
  STRATA_RETURN_IF_ERROR(a.graph.Validate());
  // One bar per phase, each drawn only while that phase runs.
  std::unique_ptr<ProgressBar> bar;
  std::string phase;
  double last = 0;
  constexpr std::uint64_t kSteps = 1000;
  auto progress = [&](const char* p, double f) {
    if (phase != p) {
      if (bar) bar->Finish();
      phase = p;
      bar = std::make_unique<ProgressBar>("build: " + phase, kSteps, 0.5);
      last = 0;
    }
    if (f > last) {
      bar->Add(static_cast<std::uint64_t>((f - last) * kSteps));
      last = static_cast<double>(static_cast<std::uint64_t>(f * kSteps)) / kSteps;
    }
  };
  STRATA_ASSIGN_OR_RETURN(GraphBuildReport r, BuildGraphIndex(a.base, a.index, a.graph, progress));
  if (bar) bar->Finish();
  std::printf(
      "built graph index %s: %llu x %u, R=%u L=%u alpha=%.2f, pq %u B/vector\n"
      "  time %.1f s (load %.1f, pq %.1f, graph %.1f, write %.1f), peak RSS %.2f GiB\n"
      "  average degree %.1f (max %u), index %.1f MiB on disk\n",
      a.index.c_str(), static_cast<unsigned long long>(r.num_vectors), r.dim, a.graph.R,
      a.graph.L, a.graph.alpha, r.pq_bytes, r.seconds_total, r.seconds_load, r.seconds_pq,
      r.seconds_graph, r.seconds_write, static_cast<double>(r.peak_rss_bytes) / (1 << 30),
      r.average_degree, r.max_degree, static_cast<double>(r.index_bytes) / (1 << 20));
  return Status::OK();
}

}  // namespace

void AddBuildCommand(CLI::App& root, CommandAction* action) {
  auto a = std::make_shared<BuildArgs>();
  CLI::App* cmd = root.add_subcommand("build", "Build an SSD-resident index from a vector file");
  cmd->add_option("--type", a->type, "Index type: graph")->capture_default_str();
  cmd->add_option("--base", a->base, "Base vectors (.fbin .u8bin .i8bin .fvecs .bvecs .npy)")
      ->required();
  cmd->add_option("--index", a->index, "Index directory to create")->required();
  cmd->add_option("--metric", a->metric, "l2, ip or cosine")->capture_default_str();
  cmd->add_option("--R", a->graph.R, "Graph maximum degree")->capture_default_str();
  cmd->add_option("--L", a->graph.L, "Build search list size (L_build)")->capture_default_str();
  cmd->add_option("--alpha", a->graph.alpha, "RobustPrune alpha")->capture_default_str();
  cmd->add_option("--pq-bytes", a->graph.pq_bytes, "PQ bytes per vector in RAM (0 = auto)")
      ->capture_default_str();
  cmd->add_option("--threads", a->graph.threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--seed", a->graph.seed, "Random seed")->capture_default_str();
  cmd->callback([a, action] { *action = [a] { return RunBuild(*a); }; });
}

}  // namespace strata::cli
