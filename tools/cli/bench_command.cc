// `strata bench`: sweeps search settings on an index and prints the
// recall / QPS / latency / pages-per-query table (and JSON / CSV).
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "command.h"
#include "search_report.h"
#include "strata/dataset.h"

namespace strata::cli {
namespace {

struct BenchArgs {
  std::string index, queries, gt, json, csv, engine = "auto";
  std::uint32_t k = 10;
  std::vector<std::uint32_t> L = {10, 20, 30, 50, 75, 100, 150, 200};
  std::vector<std::uint32_t> beamwidth = {4};
  std::vector<unsigned> threads = {1, 2};
  std::uint64_t cache_nodes = 0;
  double target_recall = 0;
};

Status RunBench(const BenchArgs& a) {
  OpenOptions open;
  open.cache_nodes = a.cache_nodes;
  STRATA_ASSIGN_OR_RETURN(open.io_engine, ParseIoEngine(a.engine));
  STRATA_ASSIGN_OR_RETURN(auto index, GraphIndex::Open(a.index, open));
  STRATA_ASSIGN_OR_RETURN(VectorMatrix queries, ReadVectorsAsFloat(a.queries));
  STRATA_ASSIGN_OR_RETURN(GroundTruth gt, ReadGroundTruth(a.gt));
  std::printf("%s\nqueries %llu, k=%u, reads: O_DIRECT from SSD every time; our node cache: %s\n",
              index->Describe().c_str(), static_cast<unsigned long long>(queries.rows()), a.k,
              index->cached_nodes() ? (std::to_string(index->cached_nodes()) + " nodes").c_str()
                                    : "off");
  std::printf("%6s %4s %3s %8s %9s %9s %9s %9s %8s %7s %7s\n", "L", "W", "T", "recall", "QPS",
              "mean_us", "p50_us", "p99_us", "pages/q", "hops", "io_wait");
  nlohmann::json rows = nlohmann::json::array();
  std::vector<ReportRow> all;
  for (unsigned t : a.threads) {
    for (std::uint32_t w : a.beamwidth) {
      for (std::uint32_t l : a.L) {
        ReportRow row;
        row.params.k = a.k;
        row.params.list_size = std::max(l, a.k);
        row.params.beam_width = w;
        row.threads = t;
        STRATA_RETURN_IF_ERROR(RunBatch(*index, queries, &gt, &row).status());
        const SearchSummary& s = row.summary;
        std::printf("%6u %4u %3u %8.4f %9.0f %9.0f %9.0f %9.0f %8.1f %7.1f %6.0f%%\n",
                    row.params.list_size, w, t, *row.recall, s.qps, s.mean_latency_us,
                    s.p50_latency_us, s.p99_latency_us, s.mean_pages_read, s.mean_hops,
                    100.0 * s.io_wait_share);
        std::fflush(stdout);
        rows.push_back(RowToJson(row, *index));
        all.push_back(row);
      }
    }
  }
  if (a.target_recall > 0) {
    for (unsigned t : a.threads) {
      const ReportRow* best = nullptr;
      for (const ReportRow& r : all) {
        if (r.threads == t && *r.recall >= a.target_recall &&
            (best == nullptr || r.params.list_size < best->params.list_size)) {
          best = &r;
        }
      }
      if (best) {
        std::printf("target recall %.2f, T=%u: reached at L=%u (recall %.4f, %.0f QPS, %.1f pages/q)\n",
                    a.target_recall, t, best->params.list_size, *best->recall, best->summary.qps,
                    best->summary.mean_pages_read);
      } else {
        std::printf("target recall %.2f, T=%u: not reached in this sweep\n", a.target_recall, t);
      }
    }
  }
  if (!a.json.empty()) {
    nlohmann::json doc = {{"index", a.index}, {"description", index->Describe()},
                          {"queries", a.queries}, {"gt", a.gt}, {"rows", rows}};
    std::ofstream f(a.json);
    f << doc.dump(2) << "\n";
    if (!f) return Status::IOError("cannot write " + a.json);
  }
  if (!a.csv.empty()) {
    std::ofstream f(a.csv);
    f << "L,beamwidth,threads,recall,qps,mean_latency_us,p50_latency_us,p99_latency_us,"
         "mean_pages_read,mean_hops,io_wait_share,cache_nodes\n";
    for (const ReportRow& r : all) {
      const SearchSummary& s = r.summary;
      f << r.params.list_size << ',' << r.params.beam_width << ',' << r.threads << ','
        << *r.recall << ',' << s.qps << ',' << s.mean_latency_us << ',' << s.p50_latency_us
        << ',' << s.p99_latency_us << ',' << s.mean_pages_read << ',' << s.mean_hops << ','
        << s.io_wait_share << ',' << index->cached_nodes() << '\n';
    }
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
  cmd->add_option("--L", a->L, "Search list sizes, comma-separated")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--beamwidth,-W", a->beamwidth, "Beam widths, comma-separated")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "Thread counts, comma-separated")->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--cache-nodes", a->cache_nodes, "Nodes cached in RAM (BFS from the entry)")
      ->capture_default_str();
  cmd->add_option("--io-engine", a->engine, "auto, uring, aio or pread")->capture_default_str();
  cmd->add_option("--target-recall", a->target_recall, "Report the smallest L reaching it");
  cmd->add_option("--json", a->json, "Write rows as JSON");
  cmd->add_option("--csv", a->csv, "Write rows as CSV");
  cmd->callback([a, action] { *action = [a] { return RunBench(*a); }; });
}

}  // namespace strata::cli
