// `strata bench`: sweeps search settings on an index and prints the
// recall / QPS / latency / pages-per-query table (and JSON / CSV). Graph
// indexes sweep L (and W); IVF indexes sweep nprobe (and pipeline).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "ablation.h"
#include "command.h"
#include "search_report.h"
#include "strata/dataset.h"

namespace strata::cli {
namespace {

struct BenchArgs {
  std::string index, queries, gt, json, csv;
  std::uint32_t k = 10;
  std::vector<std::uint32_t> L = {10, 20, 30, 50, 75, 100, 150, 200};
  std::vector<std::uint32_t> beamwidth = {4};
  std::vector<std::uint32_t> nprobe = {5, 10, 20, 40, 80, 160};
  std::vector<std::string> pipelines = {"full"};
  std::uint32_t inflight = 0;
  float drain_alpha = 0.4f;
  bool fill_first = true;
  std::vector<unsigned> threads = {1, 2};
  double target_recall = 0;
  GraphSearchFlags graph;
  LabelFlags labels;
  OpenFlags open;
  bool ablation = false;
  std::string shuffled_index, default_index;
  std::uint32_t warmup = 0;
  std::string warmup_queries;
};

// `count` rows spread evenly over `path` (all of them when there are
// fewer), as float32: warm-up queries drawn apart from the measured ones.
Result<VectorMatrix> ReadWarmupQueries(const std::string& path, std::uint32_t count) {
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(path));
  const std::uint64_t rows = std::min<std::uint64_t>(count, reader->rows());
  STRATA_ASSIGN_OR_RETURN(VectorMatrix m,
                          VectorMatrix::Allocate(ElementType::kFloat32, rows, reader->dim()));
  for (std::uint64_t i = 0; i < rows; ++i) {
    STRATA_RETURN_IF_ERROR(reader->ReadRowsAsFloat(i * reader->rows() / rows, 1,
                                                   m.values<float>().subspan(i * m.dim(), m.dim())));
  }
  return m;
}

// The sweep's settings in run order: per thread count and configuration, the
// swept knob (L or nprobe) ascending.
Result<std::vector<ReportRow>> Settings(const BenchArgs& a, bool ivf) {
  std::vector<ReportRow> rows;
  SearchParams base;
  STRATA_RETURN_IF_ERROR(ApplyGraphSearchFlags(a.graph, &base));
  for (unsigned t : a.threads) {
    if (ivf) {
      for (const std::string& name : a.pipelines) {
        IvfPipeline p;
        STRATA_RETURN_IF_ERROR(ParseIvfPipeline(name, &p));
        for (std::uint32_t np : a.nprobe) {
          ReportRow row;
          row.params.k = a.k;
          row.params.nprobe = np;
          row.params.pipeline = p;
          row.params.inflight = a.inflight;
          row.params.drain_alpha = a.drain_alpha;
          row.params.fill_first = a.fill_first;
          row.threads = t;
          rows.push_back(row);
        }
      }
    } else {
      for (std::uint32_t w : a.beamwidth) {
        for (std::uint32_t l : a.L) {
          ReportRow row;
          row.params = base;
          row.params.k = a.k;
          row.params.list_size = std::max(l, a.k);
          row.params.beam_width = w;
          row.threads = t;
          rows.push_back(row);
        }
      }
    }
  }
  return rows;
}

// Same configuration except the swept knob.
bool SameConfig(const ReportRow& x, const ReportRow& y) {
  return x.threads == y.threads && x.params.beam_width == y.params.beam_width &&
         x.params.pipeline == y.params.pipeline;
}

Status RunBench(const BenchArgs& a) {
  if (a.ablation) {
    if (a.shuffled_index.empty()) {
      return Status::InvalidArgument("--ablation needs --shuffled-index (and --index: packed)");
    }
    AblationArgs ab;
    ab.packed_index = a.index;
    ab.shuffled_index = a.shuffled_index;
    ab.default_index = a.default_index;
    ab.queries = a.queries;
    ab.gt = a.gt;
    ab.json = a.json;
    ab.engine = a.open.engine;
    ab.k = a.k;
    ab.L = a.L;
    ab.beam_width = a.beamwidth.front();
    ab.threads = a.threads;
    if (a.open.cache_nodes) ab.cache_nodes = a.open.cache_nodes;
    return RunAblation(ab);
  }
  STRATA_ASSIGN_OR_RETURN(OpenOptions open, ToOpenOptions(a.open));
  STRATA_ASSIGN_OR_RETURN(auto index, Index::Open(a.index, open));
  const bool ivf = index->type() == "ivf";
  STRATA_ASSIGN_OR_RETURN(VectorMatrix queries, ReadVectorsAsFloat(a.queries));
  STRATA_ASSIGN_OR_RETURN(GroundTruth gt, ReadGroundTruth(a.gt));
  STRATA_ASSIGN_OR_RETURN(std::vector<ReportRow> all, Settings(a, ivf));
  std::printf("%s\nRAM %.1f MiB, disk %.1f MiB; queries %llu, k=%u; reads: O_DIRECT from SSD "
              "every time; our node cache: %s\n",
              index->Describe().c_str(), static_cast<double>(index->memory_bytes()) / (1 << 20),
              static_cast<double>(index->disk_bytes()) / (1 << 20),
              static_cast<unsigned long long>(queries.rows()), a.k,
              index->cached_nodes() ? (std::to_string(index->cached_nodes()) + " nodes").c_str()
                                    : "off");
  STRATA_ASSIGN_OR_RETURN(auto label_filters,
                          QueryLabelFilters::Load(a.labels, *index, queries.rows()));
  if (a.warmup > 0 && !all.empty()) {
    // Unreported queries at the first setting, so that caches filled by
    // searching (the decoupled layout's edge-page cache) start warm; from
    // another file (e.g. base rows), or else the measured queries again.
    ReportRow warm = all.front();
    STRATA_ASSIGN_OR_RETURN(VectorMatrix w, ReadWarmupQueries(a.warmup_queries.empty()
                                                                  ? a.queries
                                                                  : a.warmup_queries,
                                                              a.warmup));
    STRATA_RETURN_IF_ERROR(RunBatch(*index, w, nullptr, &warm, nullptr).status());
  }
  PrintRowHeader(*index);
  nlohmann::json rows = nlohmann::json::array();
  for (ReportRow& row : all) {
    STRATA_RETURN_IF_ERROR(
        RunBatch(*index, queries, &gt, &row, label_filters->params_of()).status());
    PrintRow(*index, row);
    rows.push_back(RowToJson(row, *index));
  }
  if (a.target_recall > 0) {
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (i > 0 && SameConfig(all[i], all[i - 1])) continue;  // first row of each configuration
      const ReportRow* best = nullptr;
      for (std::size_t j = i; j < all.size() && SameConfig(all[j], all[i]); ++j) {
        if (*all[j].recall >= a.target_recall) {
          best = &all[j];
          break;
        }
      }
      const std::string config =
          ivf ? std::string("pipeline ") + IvfPipelineName(all[i].params.pipeline)
              : "W=" + std::to_string(all[i].params.beam_width);
      if (best) {
        std::printf("target recall %.2f, T=%u %s: reached at %s=%u (recall %.4f, %.0f QPS, "
                    "%.1f pages/q)\n",
                    a.target_recall, all[i].threads, config.c_str(), ivf ? "nprobe" : "L",
                    ivf ? best->params.nprobe : best->params.list_size, *best->recall,
                    best->summary.qps, best->summary.mean_pages_read);
      } else {
        std::printf("target recall %.2f, T=%u %s: not reached in this sweep\n", a.target_recall,
                    all[i].threads, config.c_str());
      }
    }
  }
  if (!a.json.empty()) {
    nlohmann::json doc = {{"index", a.index},
                          {"description", index->Describe()},
                          {"index_memory_bytes", index->memory_bytes()},
                          {"index_disk_bytes", index->disk_bytes()},
                          {"queries", a.queries},
                          {"gt", a.gt},
                          {"rows", rows}};
    std::ofstream f(a.json);
    f << doc.dump(2) << "\n";
    if (!f) return Status::IOError("cannot write " + a.json);
  }
  if (!a.csv.empty()) {
    std::ofstream f(a.csv);
    f << CsvHeader();
    for (const ReportRow& r : all) f << CsvRow(r, *index);
    if (!f) return Status::IOError("cannot write " + a.csv);
  }
  return Status::OK();
}

}  // namespace

void AddBenchCommand(CLI::App& root, CommandAction* action) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = root.add_subcommand("bench", "Sweep search settings: recall, QPS, latency, pages");
  cmd->add_option("--index", a->index, "Index directory")->required();
  cmd->add_option("--queries", a->queries, "Query vectors")->required();
  cmd->add_option("--gt", a->gt, "Ground truth (.ibin / .ivecs)")->required();
  cmd->add_option("--k", a->k, "k of recall@k")->capture_default_str();
  cmd->add_option("--L", a->L, "Graph: search list sizes, comma-separated")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--beamwidth,-W", a->beamwidth, "Graph: beam widths, comma-separated")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--nprobe", a->nprobe, "IVF: clusters probed, comma-separated")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--pipeline", a->pipelines,
                  "IVF: read pipelines, comma-separated (naive, coalesced, overlapped, "
                  "scheduled, full)")
      ->delimiter(',')->capture_default_str();
  cmd->add_option("--inflight", a->inflight, "IVF: most reads in flight per query (0 = 16)")
      ->capture_default_str();
  cmd->add_option("--drain-alpha", a->drain_alpha, "IVF: drain quantile of the full pipeline")
      ->capture_default_str();
  cmd->add_option("--fill-first", a->fill_first,
                  "IVF, scheduled/full: before k results exist, read only the pages needed for k")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Thread counts, comma-separated")->delimiter(',')
      ->capture_default_str();
  AddGraphSearchFlags(cmd, &a->graph);
  AddOpenFlags(cmd, &a->open);
  AddLabelFlags(cmd, &a->labels);
  cmd->add_option("--target-recall", a->target_recall, "Report the smallest L / nprobe reaching it");
  cmd->add_flag("--ablation", a->ablation,
                "Graph: run OctopusANN's single-factor and combined configurations (needs "
                "--shuffled-index; --index is the packed index, both with a MemGraph)");
  cmd->add_option("--shuffled-index", a->shuffled_index, "Ablation: the page-shuffled index");
  cmd->add_option("--default-index", a->default_index,
                  "Ablation: the default profile's index, measured as a last configuration");
  cmd->add_option("--warmup", a->warmup,
                  "Unreported queries searched before the sweep (warms searched caches)");
  cmd->add_option("--warmup-queries", a->warmup_queries,
                  "Vectors the --warmup queries are spread over (default: --queries)");
  cmd->add_option("--json", a->json, "Write rows as JSON");
  cmd->add_option("--csv", a->csv, "Write rows as CSV");
  cmd->callback([a, action] { *action = [a] { return RunBench(*a); }; });
}

}  // namespace strata::cli
