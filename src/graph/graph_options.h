// Options of the in-memory Vamana graph build (DiskANN's graph).
//
// Field names follow DiskANN's IndexWriteParameters (max_degree = R,
// search_list_size = L_build, alpha, max_occlusion_size = C, saturate_graph,
// num_threads) so that numbers from DiskANN papers and tools carry over.
#ifndef STRATA_GRAPH_GRAPH_OPTIONS_H_
#define STRATA_GRAPH_GRAPH_OPTIONS_H_

#include <cstdint>
#include <stop_token>

#include "graph/node_labels.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::graph {

// How RobustPrune relaxes its occlusion threshold within one prune.
enum class AlphaSchedule : std::uint8_t {
  // DiskANN's occlude_list: select with threshold 1, then raise it in x1.2
  // steps up to `alpha` while slots remain (the last step is exactly alpha).
  kRising = 0,
  // The Vamana paper's RobustPrune: a single threshold `alpha` per prune.
  kFixed = 1,
};

// Build parameters. Defaults are DiskANN's except search_list_size (125, the
// project's default L_build). Use designated initialisers:
//   VamanaBuildOptions{.metric = Metric::kInnerProduct, .max_degree = 32}.
struct VamanaBuildOptions {
  // Distance: kL2 (squared Euclidean), kInnerProduct (-<x,y>) or kCosine
  // (1 - <x,y>; the rows must already be unit-normalised, as DiskANN requires;
  // the build checks every norm and rejects others).
  Metric metric = Metric::kL2;
  // R: the most out-neighbours a node keeps after the build. >= 1.
  std::uint32_t max_degree = 64;
  // L_build: candidate list size of the greedy search that finds a node's
  // neighbours while building. >= 1; larger = better graph, slower build.
  std::uint32_t search_list_size = 125;
  // Occlusion factor of RobustPrune, >= 1. With kL2 the ratio is taken between
  // *squared* distances, as in DiskANN (alpha 1.2 here ~ 1.095 in Euclidean terms).
  float alpha = 1.2f;
  // Graph slack: a node may collect up to floor(slack_factor * max_degree)
  // reverse edges before it is pruned back to max_degree (DiskANN's
  // GRAPH_SLACK_FACTOR). Pruning at exactly R on every reverse edge cost three
  // quarters of build time in DefraDB's DISKANN vector index; here (30k x 128)
  // slack 1.0 made 16x more reverse-edge prunes and 5.5x more prune distance
  // work than 1.3, for the same recall. In [1, 4].
  float slack_factor = 1.3f;
  // C (maxc): RobustPrune considers only the nearest this many candidates. >= max_degree.
  std::uint32_t max_occlusion_size = 750;
  // Build passes over all nodes, 1 or 2. With 2 (the Vamana paper) the first
  // pass prunes with alpha = 1 and the second with `alpha`; with 1 (DiskANN)
  // the single pass prunes with `alpha`.
  std::uint32_t num_passes = 1;
  // Threshold schedule inside each prune; see AlphaSchedule. DiskANN: kRising
  // with 1 pass; the paper: kFixed with 2 passes. Measured on a 100k x 128
  // Gaussian mixture (64 clusters, R 64, L_build 125, 2 threads): DiskANN's
  // took 49 s CPU for recall@10 0.998 at search L 50, the paper's 69 s for
  // 0.937: the rising schedule fills the first slots with the alpha = 1
  // (direction-diverse) set, while a fixed alpha lets near neighbours in
  // already-covered directions take them first. A second pass with kRising
  // adds little (~+0.001 recall for 1.5x the time).
  AlphaSchedule alpha_schedule = AlphaSchedule::kRising;
  // After pruning, fill free slots with the nearest unselected candidates
  // (DiskANN's saturate_graph; off by default there and here).
  bool saturate_graph = false;
  // After the build, link every node not reachable from the entry point into
  // the graph (keeping degrees <= max_degree); otherwise only count them.
  bool connect_unreachable = true;
  // Worker threads; 0 = all hardware threads. A build with 1 thread is
  // deterministic for a given seed; with more it is not (insertion races).
  std::uint32_t num_threads = 0;
  // Seeds the node insertion order (a random permutation of the rows).
  std::uint64_t seed = 0x5eed;
  // Labels of the rows (empty: an ordinary build). Given, the build is
  // Filtered-DiskANN's FilteredVamana (node_labels.h): each insert searches
  // among the rows sharing a label with it, from its labels' start points,
  // and prunes with FilteredRobustPrune, so that every label's rows form a
  // navigable subgraph for filtered searches. Not owned; must outlive the
  // build and describe exactly the rows built.
  NodeLabels labels;
  // A request to stop: the build ends with Aborted soon after it is made
  // (every worker checks before each insert). Not a shape
  // parameter: a collection closing stops its merge with it.
  std::stop_token stop;

  // InvalidArgument naming the first bad field.
  Status Validate() const;
  // Slots per node during the build: floor(slack_factor * max_degree), >= max_degree.
  std::uint32_t SlackDegree() const;
};

}  // namespace strata::graph

#endif  // STRATA_GRAPH_GRAPH_OPTIONS_H_
