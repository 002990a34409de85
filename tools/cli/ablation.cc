#include "ablation.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>

#include "search_report.h"
#include "strata/index.h"

namespace strata::cli {
namespace {

enum class Layout { kPacked, kShuffled, kDefault };

struct Config {
  const char* name;
  Layout layout;
  bool cache, mem_graph, page_search, dynamic_width, pipelined;
};

// OctopusANN's single factors and combinations (C1..C5), then our default.
const Config kConfigs[] = {
    {"baseline", Layout::kPacked, false, false, false, false, false},
    {"Cache", Layout::kPacked, true, false, false, false, false},
    {"MemGraph", Layout::kPacked, false, true, false, false, false},
    {"PageShuffle", Layout::kShuffled, false, false, false, false, false},
    {"PageSearch", Layout::kPacked, false, false, true, false, false},
    {"DynamicWidth", Layout::kPacked, false, false, false, true, false},
    {"Pipeline", Layout::kPacked, false, false, false, false, true},
    {"C1 PS+PSe", Layout::kShuffled, false, false, true, false, false},
    {"C2 Pipe+DW", Layout::kPacked, false, false, false, true, true},
    {"C3 MemG+PS+PSe", Layout::kShuffled, false, true, true, false, false},
    {"C4 MemG+Pipe+DW", Layout::kPacked, false, true, false, true, true},
    {"C5 MemG+PS+PSe+DW", Layout::kShuffled, false, true, true, true, false},
    {"default", Layout::kDefault, false, true, true, false, false},
    // Variants of the default that decided its search switches.
    {"default + DW", Layout::kDefault, false, true, true, true, false},
    {"default + Pipeline", Layout::kDefault, false, true, true, false, true},
};

// Linear interpolation of (qps, pages) at `target` recall over rows sorted by
// L; nullopt when the sweep never reaches it.
struct AtRecall {
  double qps, pages, latency_us;
};
std::optional<AtRecall> Interpolate(const std::vector<const ReportRow*>& rows, double target) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double r = *rows[i]->recall;
    if (r < target) continue;
    const SearchSummary& b = rows[i]->summary;
    if (i == 0) return AtRecall{b.qps, b.mean_pages_read, b.mean_latency_us};
    const double r0 = *rows[i - 1]->recall;
    const SearchSummary& a = rows[i - 1]->summary;
    const double t = r > r0 ? (target - r0) / (r - r0) : 1.0;
    return AtRecall{a.qps + t * (b.qps - a.qps), a.mean_pages_read + t * (b.mean_pages_read - a.mean_pages_read),
                    a.mean_latency_us + t * (b.mean_latency_us - a.mean_latency_us)};
  }
  return std::nullopt;
}

}  // namespace

Status RunAblation(const AblationArgs& a) {
  STRATA_ASSIGN_OR_RETURN(VectorMatrix queries, ReadVectorsAsFloat(a.queries));
  STRATA_ASSIGN_OR_RETURN(GroundTruth gt, ReadGroundTruth(a.gt));
  OpenOptions open;
  STRATA_ASSIGN_OR_RETURN(open.io_engine, ParseIoEngine(a.engine));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Index> packed, Index::Open(a.packed_index, open));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Index> shuffled, Index::Open(a.shuffled_index, open));
  OpenOptions cached_open = open;
  cached_open.cache_nodes = a.cache_nodes;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Index> cached, Index::Open(a.packed_index, cached_open));
  std::unique_ptr<Index> def;
  if (!a.default_index.empty()) {
    STRATA_ASSIGN_OR_RETURN(def, Index::Open(a.default_index, open));
  }
  std::printf("packed:   %s\nshuffled: %s\n", packed->Describe().c_str(),
              shuffled->Describe().c_str());
  if (def) std::printf("default:  %s\n", def->Describe().c_str());
  std::printf("queries %llu, k=%u, W=%u, Cache = %llu BFS nodes; reads O_DIRECT every time\n",
              static_cast<unsigned long long>(queries.rows()), a.k, a.beam_width,
              static_cast<unsigned long long>(a.cache_nodes));
  std::printf("%-20s %3s %5s %8s %9s %9s %9s %8s %6s\n", "config", "T", "L", "recall", "QPS",
              "mean_us", "p99_us", "pages/q", "hops");
  nlohmann::json out_rows = nlohmann::json::array();
  nlohmann::json summary = nlohmann::json::array();
  std::vector<std::string> lines;
  for (const Config& c : kConfigs) {
    const Index* index = c.layout == Layout::kShuffled ? shuffled.get()
                         : c.layout == Layout::kDefault ? def.get()
                         : c.cache                       ? cached.get()
                                                         : packed.get();
    if (index == nullptr) continue;
    for (unsigned t : a.threads) {
      std::vector<ReportRow> rows;
      for (std::uint32_t l : a.L) {
        ReportRow row;
        row.params.k = a.k;
        row.params.list_size = std::max(l, a.k);
        row.params.beam_width = a.beam_width;
        row.params.mem_graph = c.mem_graph;
        row.params.page_search = c.page_search;
        row.params.dynamic_width = c.dynamic_width;
        row.params.pipelined = c.pipelined;
        row.threads = t;
        STRATA_RETURN_IF_ERROR(RunBatch(*index, queries, &gt, &row).status());
        const SearchSummary& s = row.summary;
        std::printf("%-20s %3u %5u %8.4f %9.0f %9.0f %9.0f %8.1f %6.1f\n", c.name, t,
                    row.params.list_size, *row.recall, s.qps, s.mean_latency_us, s.p99_latency_us,
                    s.mean_pages_read, s.mean_hops);
        std::fflush(stdout);
        nlohmann::json j = RowToJson(row, *index);
        j["config"] = c.name;
        out_rows.push_back(j);
        rows.push_back(row);
      }
      std::vector<const ReportRow*> ptrs;
      for (const ReportRow& r : rows) ptrs.push_back(&r);
      nlohmann::json sj = {{"config", c.name}, {"threads", t}};
      char line[256];
      int len = std::snprintf(line, sizeof line, "%-20s %3u", c.name, t);
      for (double target : {0.90, 0.95}) {
        const auto at = Interpolate(ptrs, target);
        const std::string key = target == 0.90 ? "at_0.90" : "at_0.95";
        if (at) {
          sj[key] = {{"qps", at->qps}, {"pages", at->pages}, {"latency_us", at->latency_us}};
          len += std::snprintf(line + len, sizeof line - len, " | %8.0f %7.1f", at->qps, at->pages);
        } else {
          sj[key] = nullptr;
          len += std::snprintf(line + len, sizeof line - len, " | %8s %7s", "-", "-");
        }
      }
      summary.push_back(sj);
      lines.push_back(line);
    }
  }
  std::printf("\nat recall@%u:          T |  QPS@0.90 pages@0.90 |  QPS@0.95 pages@0.95\n", a.k);
  for (const std::string& l : lines) std::printf("%s\n", l.c_str());
  if (!a.json.empty()) {
    nlohmann::json doc = {{"packed_index", a.packed_index},
                          {"shuffled_index", a.shuffled_index},
                          {"default_index", a.default_index},
                          {"packed", packed->Describe()},
                          {"shuffled", shuffled->Describe()},
                          {"default", def ? def->Describe() : ""},
                          {"queries", a.queries},
                          {"gt", a.gt},
                          {"beamwidth", a.beam_width},
                          {"cache_nodes", a.cache_nodes},
                          {"rows", out_rows},
                          {"summary", summary}};
    std::ofstream f(a.json);
    f << doc.dump(2) << "\n";
    if (!f) return Status::IOError("cannot write " + a.json);
  }
  return Status::OK();
}

}  // namespace strata::cli
