// `strata bench --ablation`: the graph I/O techniques of OctopusANN ("I/O
// Optimizations for Graph-Based Disk-Resident ANN Search: A Design Space
// Exploration") measured alone and in its combinations (C1..C5) on top of the
// PQ baseline, each swept over L at every thread count, with the QPS and pages
// per query at recall@k 0.90 and 0.95 interpolated from the sweep.
#ifndef STRATA_TOOLS_CLI_ABLATION_H_
#define STRATA_TOOLS_CLI_ABLATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "strata/dataset.h"
#include "strata/status.h"

namespace strata::cli {

struct AblationArgs {
  std::string packed_index;    // packed layout with a MemGraph (baseline, MemG, Cache, DW, Pipe, PSe)
  std::string shuffled_index;  // page-shuffled layout with a MemGraph (PS, C1, C3, C5)
  std::string default_index;   // optional: the default profile's index (OPQ codes too)
  std::string queries, gt, json, engine = "auto";
  std::uint32_t k = 10;
  std::vector<std::uint32_t> L;
  std::uint32_t beam_width = 4;
  std::vector<unsigned> threads;
  std::uint64_t cache_nodes = 10000;  // the Cache configuration's BFS cache
};

Status RunAblation(const AblationArgs& args);

}  // namespace strata::cli

#endif  // STRATA_TOOLS_CLI_ABLATION_H_
