// `strata build`: builds an SSD-resident index from a vector file.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "command.h"
#include "strata/graph_index.h"
#include "strata/ivf_index.h"
#include "strata/labels.h"
#include "strata/progress.h"

namespace strata::cli {
namespace {

struct BuildArgs {
  std::string type = "graph";
  std::string base, index, metric = "l2";
  GraphBuildOptions graph;
  // Graph I/O layout: a profile, then any technique flag given explicitly.
  std::string profile = "default";
  std::optional<std::uint32_t> opq_iterations, mem_graph_R, shuffle_rounds, shuffle_swaps;
  std::optional<double> mem_graph_ratio;
  std::optional<bool> page_shuffle, all_in_storage;
  IvfBuildOptions ivf;  // --type ivf
  std::string label_file;  // graph: a label build (FilteredVamana)
};

// The profile's settings, overridden by the technique flags the user gave.
Status ResolveGraphOptions(BuildArgs* a) {
  STRATA_RETURN_IF_ERROR(ApplyBuildProfile(a->profile, &a->graph));
  if (a->opq_iterations) a->graph.opq_iterations = *a->opq_iterations;
  if (a->mem_graph_ratio) a->graph.mem_graph_ratio = *a->mem_graph_ratio;
  if (a->mem_graph_R) a->graph.mem_graph_R = *a->mem_graph_R;
  if (a->page_shuffle) a->graph.page_shuffle = *a->page_shuffle;
  if (a->shuffle_rounds) a->graph.shuffle_rounds = *a->shuffle_rounds;
  if (a->shuffle_swaps) a->graph.shuffle_swaps = *a->shuffle_swaps;
  if (a->all_in_storage) a->graph.all_in_storage = *a->all_in_storage;
  return Status::OK();
}

// One progress bar per phase, each drawn only while that phase runs.
class PhaseProgress {
 public:
  void operator()(const char* p, double f) {
    if (phase_ != p) {
      if (bar_) bar_->Finish();
      phase_ = p;
      bar_ = std::make_unique<ProgressBar>("build: " + phase_, kSteps, 0.5);
      last_ = 0;
    }
    if (f > last_) {
      bar_->Add(static_cast<std::uint64_t>((f - last_) * kSteps));
      last_ = static_cast<double>(static_cast<std::uint64_t>(f * kSteps)) / kSteps;
    }
  }
  void Finish() {
    if (bar_) bar_->Finish();
  }

 private:
  static constexpr std::uint64_t kSteps = 1000;
  std::unique_ptr<ProgressBar> bar_;
  std::string phase_;
  double last_ = 0;
};

// `--type ivf`: IVF + Split-RaBitQ (RaBitQ-SSD). --threads and --seed are
// shared with the graph build.
Status RunIvfBuild(BuildArgs a) {
  STRATA_ASSIGN_OR_RETURN(a.ivf.metric, ParseMetric(a.metric));
  a.ivf.threads = a.graph.threads;
  a.ivf.seed = a.graph.seed;
  STRATA_RETURN_IF_ERROR(a.ivf.Validate());
  auto bar = std::make_shared<PhaseProgress>();
  STRATA_ASSIGN_OR_RETURN(IvfBuildReport r,
                          BuildIvfIndex(a.base, a.index, a.ivf,
                                        [bar](const char* p, double f) { (*bar)(p, f); }));
  bar->Finish();
  std::printf(
      "built ivf index %s: %llu x %u, C=%llu, D_m=%u, B=%u, rerank %s, coarse %s\n"
      "  time %.1f s (load %.1f, cluster %.1f, encode %.1f, write %.1f), peak RSS %.2f GiB\n"
      "  record %u B (%u/page), RAM %.1f B/vector, index %.1f MiB on disk\n",
      a.index.c_str(), static_cast<unsigned long long>(r.num_vectors), r.dim,
      static_cast<unsigned long long>(r.clusters), r.prefix_bits,
      a.ivf.rerank == "raw" ? 1u : a.ivf.bits, a.ivf.rerank.c_str(), a.ivf.coarse.c_str(),
      r.seconds_total, r.seconds_load, r.seconds_cluster, r.seconds_encode, r.seconds_write,
      static_cast<double>(r.peak_rss_bytes) / (1 << 30), r.record_bytes, r.records_per_page,
      r.ram_bytes_per_vector, static_cast<double>(r.index_bytes) / (1 << 20));
  return Status::OK();
}

Status RunBuild(BuildArgs a) {
  if (a.type == "ivf") return RunIvfBuild(std::move(a));
  if (a.type != "graph") {
    return Status::NotSupported("index type '" + a.type + "' (available: graph, ivf)");
  }
  STRATA_ASSIGN_OR_RETURN(a.graph.metric, ParseMetric(a.metric));
  STRATA_RETURN_IF_ERROR(ResolveGraphOptions(&a));
  STRATA_RETURN_IF_ERROR(a.graph.Validate());
  std::optional<LabelSets> labels;
  if (!a.label_file.empty()) {
    STRATA_ASSIGN_OR_RETURN(labels, ReadLabels(a.label_file));
    a.graph.labels = &*labels;
  }
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
      "  average degree %.1f (max %u), index %.1f MiB on disk\n"
      "  layout: %u records/page, OR(G) %.4f (id order %.4f), %llu empty slots, shuffle %.1f s; "
      "memgraph %u nodes (%.1f s); OPQ %u iterations%s\n",
      a.index.c_str(), static_cast<unsigned long long>(r.num_vectors), r.dim, a.graph.R,
      a.graph.L, a.graph.alpha, r.pq_bytes, r.seconds_total, r.seconds_load, r.seconds_pq,
      r.seconds_graph, r.seconds_write, static_cast<double>(r.peak_rss_bytes) / (1 << 30),
      r.average_degree, r.max_degree, static_cast<double>(r.index_bytes) / (1 << 20),
      r.records_per_page, r.overlap_after, r.overlap_before,
      static_cast<unsigned long long>(r.empty_slots), r.seconds_shuffle, r.mem_graph_nodes,
      r.seconds_mem_graph, a.graph.opq_iterations,
      a.graph.all_in_storage ? "; all-in-storage records" : "");
  return Status::OK();
}

}  // namespace

void AddBuildCommand(CLI::App& root, CommandAction* action) {
  auto a = std::make_shared<BuildArgs>();
  CLI::App* cmd = root.add_subcommand("build", "Build an SSD-resident index from a vector file");
  cmd->add_option("--type", a->type, "Index type: graph or ivf")->capture_default_str();
  cmd->add_option("--base", a->base, "Base vectors (.fbin .u8bin .i8bin .fvecs .bvecs .npy)")
      ->required();
  cmd->add_option("--index", a->index, "Index directory to create")->required();
  cmd->add_option("--metric", a->metric, "l2, ip or cosine")->capture_default_str();
  cmd->add_option("--R", a->graph.R, "Graph maximum degree")->capture_default_str();
  cmd->add_option("--L", a->graph.L, "Build search list size (L_build)")->capture_default_str();
  cmd->add_option("--alpha", a->graph.alpha, "RobustPrune alpha")->capture_default_str();
  cmd->add_option("--pq-train-rows", a->graph.pq_train_rows,
                  "Rows sampled to train the PQ codebooks (0 = 65,536)")
      ->capture_default_str();
  cmd->add_option("--passes", a->graph.passes, "Graph build passes (1 or 2)")->capture_default_str();
  cmd->add_option("--pq-bytes", a->graph.pq_bytes, "PQ bytes per vector in RAM (0 = auto)")
      ->capture_default_str();
  cmd->add_option("--profile", a->profile,
                  "Graph layout profile: baseline (DiskANN) or default (best measured)")
      ->capture_default_str();
  cmd->add_option("--opq", a->opq_iterations, "OPQ rotation iterations for the PQ codes (0 = off)");
  cmd->add_option("--memgraph-ratio", a->mem_graph_ratio,
                  "Fraction of nodes in the in-RAM navigation graph (0 = none)");
  cmd->add_option("--memgraph-R", a->mem_graph_R, "MemGraph degree");
  cmd->add_option("--shuffle", a->page_shuffle, "Page shuffle: co-locate graph neighbours (true/false)");
  cmd->add_option("--shuffle-rounds", a->shuffle_rounds, "Page shuffle LDG refinement rounds");
  cmd->add_option("--shuffle-swaps", a->shuffle_swaps, "Page shuffle pair-swap passes");
  cmd->add_option("--all-in-storage", a->all_in_storage,
                  "Store neighbours' PQ codes in each record; RAM holds only the codebook");
  cmd->add_option("--clusters", a->ivf.clusters, "IVF: clusters (0 = N / 1024)")
      ->capture_default_str();
  cmd->add_option("--prefix-bits", a->ivf.prefix_bits,
                  "IVF: code bits per vector in RAM, D_m (multiple of 64; 0 = all)")
      ->capture_default_str();
  cmd->add_option("--bits", a->ivf.bits, "IVF: RaBitQ bits per dimension, B (1..9)")
      ->capture_default_str();
  cmd->add_option("--rerank", a->ivf.rerank, "IVF: SSD records, excode or raw")
      ->capture_default_str();
  cmd->add_option("--coarse", a->ivf.coarse, "IVF: coarse quantizer, irq or flat")
      ->capture_default_str();
  cmd->add_option("--filter-codes", a->ivf.filter_codes,
                  "IVF: keep 2-bit codes in RAM (12 + D'/8 + (D' - D_m)/8 bytes a vector) for "
                  "exact filtered scans of listed rows (true/false)")
      ->capture_default_str();
  cmd->add_option("--page-order", a->ivf.page_order,
                  "IVF: records of a cluster in page groups of nearby vectors (locality) or by "
                  "distance to the centroid (centroid)")
      ->capture_default_str();
  cmd->add_option("--label_file,--label-file", a->label_file,
                  "Graph: per-vector labels (DiskANN's label file, or .spmat); builds the graph "
                  "label-aware (Filtered-DiskANN's FilteredVamana) so filtered searches by "
                  "label start at the label's rows and walk only passing rows");
  cmd->add_option("--reuse-graph", a->graph.reuse_graph,
                  "Take the graph of this existing index (same data) instead of building it");
  cmd->add_option("--threads", a->graph.threads, "Threads (0 = all cores)")->capture_default_str();
  cmd->add_option("--seed", a->graph.seed, "Random seed")->capture_default_str();
  cmd->callback([a, action] { *action = [a] { return RunBuild(*a); }; });
}

}  // namespace strata::cli
