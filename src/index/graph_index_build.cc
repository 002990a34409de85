// BuildGraphIndex: base file -> PQ codes + Vamana graph -> node file, PQ file,
// entry file, manifest, written into a staging directory that replaces
// `index_dir` only once complete (BuildAside).

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "base/stats.h"
#include "base/timer.h"
#include "format/blob_file.h"
#include "format/graph_node_file.h"
#include "format/manifest.h"
#include "graph/page_shuffle.h"
#include "graph/vamana_builder.h"
#include "quant/pq/sample.h"
#include "search/mem_graph.h"
#include "index/build_util.h"
#include "index/graph_index_write.h"
#include "index/graph_loader.h"
#include "index/index_files.h"
#include "kernels/distance.h"
#include "quant/pq/product_quantizer.h"
#include "strata/graph_index.h"
#include "strata/labels.h"

namespace strata {
namespace {

// The "default" profile's code and MemGraph settings (docs/graph-search.md
// has the measurements behind them).
constexpr std::uint32_t kDefaultProfileOpqIterations = 50;
// 0.5 %: within 1.2x of the baseline's RAM (1 % was 1.21x) for 5 % more
// pages at recall 0.90 on synth1m.
constexpr double kDefaultProfileMemGraphRatio = 0.005;

}  // namespace

Status ApplyBuildProfile(const std::string& profile, GraphBuildOptions* options) {
  if (profile == "baseline") {
    options->opq_iterations = 0;
    options->mem_graph_ratio = 0.0;
    options->page_shuffle = false;
    options->all_in_storage = false;
  } else if (profile == "default") {
    const GraphBuildOptions defaults;
    options->opq_iterations = kDefaultProfileOpqIterations;
    options->mem_graph_ratio = kDefaultProfileMemGraphRatio;
    options->mem_graph_R = defaults.mem_graph_R;
    options->mem_graph_L = defaults.mem_graph_L;
    options->page_shuffle = true;
    options->shuffle_rounds = defaults.shuffle_rounds;
    options->shuffle_swaps = defaults.shuffle_swaps;
    options->all_in_storage = false;
  } else {
    return Status::InvalidArgument("unknown profile '" + profile + "' (baseline, default)");
  }
  return Status::OK();
}

Status GraphBuildOptions::Validate() const {
  if (R < 4 || R > 1024) return Status::InvalidArgument("R must be in 4..1024");
  if (!(mem_graph_ratio >= 0.0 && mem_graph_ratio <= 0.5)) {
    return Status::InvalidArgument("MemGraph ratio must be in [0, 0.5]");
  }
  if (mem_graph_R < 4 || mem_graph_R > 256) {
    return Status::InvalidArgument("MemGraph degree must be in 4..256");
  }
  if (passes < 1 || passes > 2) return Status::InvalidArgument("passes must be 1 or 2");
  if (shuffle_rounds > 256 || shuffle_swaps > 256) {
    return Status::InvalidArgument("shuffle rounds and swap passes must be at most 256");
  }
  if (opq_iterations > 1000) return Status::InvalidArgument("OPQ iterations must be at most 1000");
  if (L < R / 2 || L > 10000) return Status::InvalidArgument("L must be in R/2..10000");
  if (!(alpha >= 1.0f && alpha <= 4.0f)) return Status::InvalidArgument("alpha must be in [1, 4]");
  if (pq_bytes > 512) return Status::InvalidArgument("pq_bytes must be at most 512");
  return Status::OK();
}

Result<quant::ProductQuantizer> TrainGraphQuantizer(const float* rows, std::uint64_t n,
                                                    std::uint32_t dim,
                                                    const GraphBuildOptions& options) {
  quant::PqOptions pq_opt;
  // Default code size: DiskANN's 32 bytes where dim allows, dim / 4 up to 96
  // bytes for high dimensions (measured: 12-byte codes at 48 dims lose a third
  // of recall@10 on normalised data; 32 bytes at 128 dims match DiskANN).
  pq_opt.m = options.pq_bytes ? options.pq_bytes
                              : std::max<std::uint32_t>(std::min<std::uint32_t>(dim, 32),
                                                        std::min<std::uint32_t>(dim / 4, 96));
  pq_opt.m = std::min<std::size_t>(pq_opt.m, dim);
  // Centring helps L2; for inner products the mean shifts every score equally
  // only under L2, so IP trains uncentred (pitfall 1 of the notes). Cosine
  // codes are of unit vectors, ranked by L2 (the same order as cosine), so
  // they train centred like L2. Measured on synth200k768c at 96 bytes:
  // recall@10 at L 50 0.589 with uncentred codes and IP tables, 0.735 with L2
  // tables, 0.734 centred (DiskANN 0.738); bench/results/graph_synth200k768c.md.
  pq_opt.center = options.metric != Metric::kInnerProduct;
  pq_opt.seed = options.seed;
  pq_opt.threads = options.threads;
  pq_opt.opq_iterations = static_cast<int>(options.opq_iterations);
  if (options.pq_train_rows) pq_opt.max_train_rows = options.pq_train_rows;
  return quant::ProductQuantizer::Train(rows, n, dim, pq_opt);
}

std::uint64_t GraphQuantizerTrainRows(std::uint64_t n, const GraphBuildOptions& options) {
  return std::min<std::uint64_t>(n, options.pq_train_rows ? options.pq_train_rows
                                                          : quant::PqOptions{}.max_train_rows);
}

Result<GraphBuildReport> BuildGraphIndex(const std::string& base_path, const std::string& index_dir,
                                         const GraphBuildOptions& options,
                                         const BuildProgress& progress) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  const Timer total;
  auto report_progress = [&](const char* phase, double f) {
    if (progress) progress(phase, f);
  };
  GraphBuildReport report;

  // ---- load (as float32; cosine rows normalised) ----
  Timer phase;
  report_progress("load", 0.0);
  STRATA_ASSIGN_OR_RETURN(BuildRows loaded, LoadBuildRows(base_path, "graph index"));
  const ElementType type = loaded.type;
  const std::uint32_t dim = loaded.dim;
  const std::uint64_t n = loaded.n;
  std::span<float> values = loaded.matrix.values<float>();
  // Graph and PQ work on unit vectors under cosine (so that cosine = IP);
  // integer records keep their original values (search uses the exact cosine).
  std::vector<float> normalised;
  std::span<const float> graph_rows = values;
  if (options.metric == Metric::kCosine) {
    float* target = values.data();
    if (!IsFloatType(type)) {
      normalised.assign(values.begin(), values.end());
      target = normalised.data();
      graph_rows = normalised;
    }
    STRATA_RETURN_IF_ERROR(NormalizeRowsForCosine(target, n, dim, base_path));
  }
  report.seconds_load = phase.ElapsedSeconds();
  report_progress("load", 1.0);
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "graph index build"));

  // ---- PQ ----
  phase.Reset();
  report_progress("pq", 0.0);
  STRATA_ASSIGN_OR_RETURN(quant::ProductQuantizer pq,
                          TrainGraphQuantizer(graph_rows.data(), n, dim, options));
  std::vector<std::uint8_t> codes(n * pq.code_size());
  STRATA_RETURN_IF_ERROR(pq.Encode(graph_rows.data(), n, codes.data(), options.threads));
  report.pq_bytes = static_cast<std::uint32_t>(pq.code_size());
  report.seconds_pq = phase.ElapsedSeconds();
  report_progress("pq", 1.0);
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "graph index build"));

  // ---- graph (built, or reused from another index of the same vectors) ----
  phase.Reset();
  std::optional<graph::VamanaGraph> reused;
  if (!options.reuse_graph.empty()) {
    report_progress("graph", 0.0);
    STRATA_ASSIGN_OR_RETURN(reused, LoadGraphFromIndex(options.reuse_graph, n, dim,
                                                       options.metric, options.R));
    report_progress("graph", 1.0);
  }
  graph::VamanaBuildOptions gopt;
  gopt.metric = options.metric;
  gopt.max_degree = options.R;
  gopt.search_list_size = options.L;
  gopt.alpha = options.alpha;
  gopt.num_passes = options.passes;
  gopt.num_threads = options.threads;
  gopt.seed = options.seed;
  gopt.stop = options.stop;
  if (options.labels != nullptr) {
    if (options.labels->rows() != n) {
      return Status::InvalidArgument("graph index build: labels have " +
                                     std::to_string(options.labels->rows()) + " rows for " +
                                     std::to_string(n) + " vectors");
    }
    if (reused) {
      return Status::InvalidArgument("graph index build: labels need a graph built with them, "
                                     "not reuse_graph");
    }
    gopt.labels = graph::NodeLabels{options.labels->offsets, options.labels->labels};
  }
  if (!reused) {
    STRATA_ASSIGN_OR_RETURN(reused, graph::BuildVamana(graph_rows, dim, gopt, [&](double f) {
                              report_progress("graph", f);
                            }));
  }
  const graph::VamanaGraph& g = *reused;
  report.seconds_graph = phase.ElapsedSeconds();

  GraphIndexContents contents{type, dim, n, values, graph_rows, &pq, &codes, &g,
                              GraphQuantizerTrainRows(n, options)};
  STRATA_RETURN_IF_ERROR(WriteGraphIndex(contents, index_dir, options, progress, total, &report));
  return report;
}

}  // namespace strata
