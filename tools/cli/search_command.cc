// `strata search`: runs a query file against an index, writes the results
// (ground-truth format) and optionally a STATS.json.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "command.h"
#include "search_report.h"
#include "strata/dataset.h"

namespace strata::cli {
namespace {

struct SearchArgs {
  std::string index, queries, out, stats, gt, pipeline = "full";
  SearchParams params;
  GraphSearchFlags graph;
  OpenFlags open;
  LabelFlags labels;
  unsigned threads = 1;
};

Status RunSearch(const SearchArgs& a) {
  STRATA_ASSIGN_OR_RETURN(OpenOptions open, ToOpenOptions(a.open));
  STRATA_ASSIGN_OR_RETURN(auto index, Index::Open(a.index, open));
  STRATA_ASSIGN_OR_RETURN(VectorMatrix queries, ReadVectorsAsFloat(a.queries));
  std::optional<GroundTruth> gt;
  if (!a.gt.empty()) {
    STRATA_ASSIGN_OR_RETURN(gt, ReadGroundTruth(a.gt));
  }
  ReportRow row;
  row.params = a.params;
  STRATA_RETURN_IF_ERROR(ApplyGraphSearchFlags(a.graph, &row.params));
  STRATA_RETURN_IF_ERROR(ParseIvfPipeline(a.pipeline, &row.params.pipeline));
  row.threads = a.threads;
  STRATA_ASSIGN_OR_RETURN(auto label_filters,
                          QueryLabelFilters::Load(a.labels, *index, queries.rows()));
  STRATA_ASSIGN_OR_RETURN(BatchSearchResult r, RunBatch(*index, queries, gt ? &*gt : nullptr, &row,
                                                        label_filters->params_of()));
  STRATA_RETURN_IF_ERROR(WriteGroundTruth(a.out, r.results));
  std::printf("%s\n%zu queries, k=%u, cache %llu nodes\n", index->Describe().c_str(),
              row.summary.num_queries, a.params.k,
              static_cast<unsigned long long>(index->cached_nodes()));
  PrintRowHeader(*index);
  PrintRow(*index, row);
  std::printf("wrote %s\n", a.out.c_str());
  if (!a.stats.empty()) {
    std::ofstream f(a.stats);
    f << RowToJson(row, *index).dump(2) << "\n";
    if (!f) return Status::IOError("cannot write " + a.stats);
  }
  return Status::OK();
}

}  // namespace

void AddSearchCommand(CLI::App& root, CommandAction* action) {
  auto a = std::make_shared<SearchArgs>();
  CLI::App* cmd = root.add_subcommand("search", "Search an index with a query file");
  cmd->add_option("--index", a->index, "Index directory")->required();
  cmd->add_option("--queries", a->queries, "Query vectors")->required();
  cmd->add_option("--out", a->out,
                  "Results file (.ibin: ids and distances; past a query's last hit the id "
                  "is 4294967295 and the distance inf)")
      ->required();
  cmd->add_option("--k", a->params.k, "Neighbours per query")->capture_default_str();
  cmd->add_option("--L", a->params.list_size, "Search list size")->capture_default_str();
  cmd->add_option("--beamwidth,-W", a->params.beam_width, "Reads per round")->capture_default_str();
  cmd->add_option("--nprobe", a->params.nprobe, "IVF: clusters probed (0 = index default)")
      ->capture_default_str();
  cmd->add_option("--pipeline", a->pipeline,
                  "IVF read pipeline: naive, coalesced, overlapped, scheduled, full")
      ->capture_default_str();
  cmd->add_option("--inflight", a->params.inflight, "IVF: most reads in flight per query (0 = 16)")
      ->capture_default_str();
  cmd->add_option("--drain-alpha", a->params.drain_alpha, "IVF: drain quantile (full pipeline)")
      ->capture_default_str();
  cmd->add_option("--fill-first", a->params.fill_first,
                  "IVF, scheduled/full: before k results exist, read only the pages needed for k")
      ->capture_default_str();
  AddGraphSearchFlags(cmd, &a->graph);
  AddOpenFlags(cmd, &a->open);
  AddLabelFlags(cmd, &a->labels);
  cmd->add_option("--threads", a->threads, "Search threads")->capture_default_str();
  cmd->add_option("--stats", a->stats, "Write summary statistics as JSON");
  cmd->add_option("--gt", a->gt, "Ground truth, to report recall@k");
  cmd->callback([a, action] { *action = [a] { return RunSearch(*a); }; });
}

}  // namespace strata::cli
