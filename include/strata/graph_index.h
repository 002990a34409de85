// The graph index (DiskANN/Vamana on SSD): building and opening.
//
// A graph index lives in a directory:
//   manifest.json   format version, metric, dims, counts, parameters, build
//                   statistics, and every file with its size and checksum
//   graph.nodes     node records (full vector + neighbour ids) in checksummed
//                   4 KiB sectors, read with O_DIRECT during search
//   pq.bin          PQ codebook and one code per vector, loaded to RAM at open
// Byte layouts: docs/format.md. Search goes through the generic Index /
// Searcher interface of strata/index.h.
#ifndef STRATA_GRAPH_INDEX_H_
#define STRATA_GRAPH_INDEX_H_

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include "strata/index.h"

namespace strata {

struct LabelSets;  // strata/labels.h

// Build parameters, named as DiskANN names them.
struct GraphBuildOptions {
  Metric metric = Metric::kL2;   // cosine normalises vectors at ingest
  std::uint32_t R = 64;          // maximum out-degree
  std::uint32_t L = 125;         // search list size during the build (L_build)
  float alpha = 1.2f;            // RobustPrune's distance threshold (>= 1)
  // Build passes: 1 (DiskANN: one pass with a rising alpha) or 2 (a second
  // pass over every node; ~1.5x the graph time).
  std::uint32_t passes = 1;
  // PQ code bytes per vector kept in RAM; 0 picks max(min(dim, 32), min(dim / 4, 96)).
  std::uint32_t pq_bytes = 0;
  // Rows sampled to train the PQ codebooks (0 = 65,536, faiss's default;
  // DiskANN samples up to 256,000).
  std::uint64_t pq_train_rows = 0;
  // OPQ rotation alternations for the PQ codes (0 = plain PQ as DiskANN).
  std::uint32_t opq_iterations = 0;
  // MemGraph: in-RAM navigation graph over this fraction of the nodes (0 =
  // none; the OctopusANN design-space study uses 0.1 %..1 %), with its own degree and build list size.
  double mem_graph_ratio = 0.0;
  std::uint32_t mem_graph_R = 32;
  std::uint32_t mem_graph_L = 64;
  // PageShuffle: reorder records so that graph neighbours share 4 KiB pages
  // (Starling's block packing): `shuffle_rounds` LDG refinement rounds, then
  // `shuffle_swaps` pair-swap passes (bench/results/page_shuffle_synth1m.md:
  // 4 and 3 gave the most overlap per second on synth1m).
  bool page_shuffle = false;
  std::uint32_t shuffle_rounds = 4;
  std::uint32_t shuffle_swaps = 3;
  // All-in-storage: each record also carries its neighbours' PQ codes, so
  // search needs only the codebook in RAM (DefraDB's DISKANN default layout).
  bool all_in_storage = false;
  // Reuse the graph of this existing index directory (same vectors, metric
  // and R) instead of building one: for writing another layout or other codes
  // of the same graph quickly. Empty = build.
  std::string reuse_graph;
  // Per-row labels (DiskANN's --label_file): when set, the graph is built
  // label-aware (Gollapudi et al., "Filtered-DiskANN", WWW 2023:
  // FilteredVamana) and the index keeps a start row per label, so that a
  // filtered search starts among the queried label's rows and walks only
  // rows that pass (SearchParams::filter_steers_walk). Must have one row per
  // vector; not owned. Not with reuse_graph.
  const LabelSets* labels = nullptr;
  unsigned threads = 0;          // 0 = all cores
  std::uint64_t seed = 1;        // graph and PQ training seed (deterministic on 1 thread)
  // A request to stop: the build (or merge) returns Aborted soon after it is
  // made, at its next phase or chunk of inserts, and writes nothing.
  std::stop_token stop;
  Status Validate() const;
};

// Sets `options`' layout and code fields to a named profile: "baseline"
// (DiskANN: plain PQ, packed layout, no MemGraph) or "default" (the best
// measured composition). Leaves metric, R, L, alpha, pq_bytes, threads and
// seed alone. InvalidArgument for an unknown name.
Status ApplyBuildProfile(const std::string& profile, GraphBuildOptions* options);

// What a build did, for the CLI's report and the manifest.
struct GraphBuildReport {
  std::uint64_t num_vectors = 0;
  std::uint32_t dim = 0;
  std::uint32_t pq_bytes = 0;
  double seconds_total = 0;
  double seconds_load = 0;
  double seconds_pq = 0;
  double seconds_graph = 0;
  double seconds_write = 0;
  double average_degree = 0;
  std::uint32_t max_degree = 0;
  std::uint64_t index_bytes = 0;   // all files on disk
  std::uint64_t peak_rss_bytes = 0;
  double seconds_mem_graph = 0;
  double seconds_shuffle = 0;
  std::uint32_t mem_graph_nodes = 0;
  double overlap_before = 0;      // OctopusANN's overlap ratio OR(G), id order
  double overlap_after = 0;       // ... of the written layout
  std::uint32_t records_per_page = 0;
  std::uint64_t empty_slots = 0;
};

// Builds a graph index over the vectors in `base_path` (any supported vector
// format) into directory `index_dir` (created if missing; an existing index
// there is replaced only when the new one is complete: it is written in a
// staging directory beside it and switched in atomically, so a failed build
// leaves the old one intact). InvalidArgument for bad options, NaN/Inf rows, or zero vectors under
// cosine; reader and I/O errors pass through.
Result<GraphBuildReport> BuildGraphIndex(const std::string& base_path, const std::string& index_dir,
                                         const GraphBuildOptions& options,
                                         const BuildProgress& progress = nullptr);

// The decoupled layout of a built graph index (NAVIS's locality-driven
// decoupling; Sun et al., "NAVIS: Concurrent Search and Update with Low
// Position-Seeking Overhead in On-SSD Graph-Based Vector Search"): its node
// file split into an edge file (edge lists only, ceil(1.3 R) ids of room per
// list, many lists to a 4 KiB page) and a vector file (full vectors in fixed
// slots), so that a search reads small edge pages to walk and vectors only
// to re-rank, and updates can rewrite edge lists out of place without the
// vectors beside them. Searched with OpenOptions::decoupled_dir.
//
// Vertices are the node file's slots and a vertex's vector slot is its
// vertex number. Edge pages take the vertices in slot order: a page-shuffled
// node file's page mates stay together, a packed one's rows stay in row
// order. Empty slots of a shuffled file keep their number with an empty
// list and a zero vector.
struct DecoupledLayoutOptions {
  // Place the edge lists by a page shuffle of their own (Starling's block
  // shuffle with the edge page's capacity, src/graph/page_shuffle.h) rather
  // than in the node file's slot order.
  bool shuffle = false;
  int refine_rounds = 4;
  int swap_passes = 3;
  unsigned threads = 0;  // 0 = all cores
  // Each edge slot carries its vertex's vector too: not decoupled but the
  // packed in-place baseline (OdinANN-like: a record holds its vector and
  // its list, so an insert rewrites the vectors beside every list it
  // changes, and fewer lists share a page). Searches take exact distances
  // from the pages they walk and read no vectors to re-rank. The vector
  // file is written all the same (inserts append there, recovery reads it).
  // RAM while writing: the vectors, num_slots * vector bytes.
  bool vectors_in_edge_pages = false;
};

struct DecoupledLayoutReport {
  std::uint64_t vertices = 0;
  std::uint64_t edge_pages = 0;
  std::uint64_t edge_bytes = 0;    // the edge file's size
  std::uint64_t vector_bytes = 0;  // the vector file's size
  // OctopusANN's overlap ratio OR(G) of the edge pages: in slot order, and
  // as written.
  double overlap_before = 0;
  double overlap_after = 0;
};

// Writes `out_dir`/graph.edges and `out_dir`/graph.vectors from the graph
// index in `index_dir`, reading its node file sequentially (RAM: the lists,
// 8 B per vertex + 4 B per edge, and the shuffle's work arrays). Each file is
// written atomically. Errors name the file.
Result<DecoupledLayoutReport> WriteDecoupledLayout(const std::string& index_dir,
                                                   const std::string& out_dir,
                                                   const DecoupledLayoutOptions& options = {});

class GraphIndex : public Index {
 public:
  // Opens a graph index. NotFound if `dir` holds no index; InvalidArgument if
  // it holds another type; Corruption for damaged or mismatched files;
  // NotSupported for a newer format.
  static Result<std::unique_ptr<GraphIndex>> Open(const std::string& dir,
                                                  const OpenOptions& options = {});
  ~GraphIndex() override;

  std::string_view type() const override { return "graph"; }
  std::uint32_t dim() const override;
  Metric metric() const override;
  ElementType element_type() const override;
  std::uint64_t num_vectors() const override;
  std::uint64_t cached_nodes() const override;
  bool ranks_restricted() const override;
  std::span<const std::uint32_t> label_start_rows() const override;
  std::size_t memory_bytes() const override;
  std::uint64_t disk_bytes() const override;
  // "graph: 1000000 x 128 float32 l2, R=64, record 772 B, 5 records/sector, pq 32 B".
  std::string Describe() const override;
  // Beam widths up to max_params.beam_width (1..128).
  Result<std::unique_ptr<Searcher>> NewSearcher(const SearchParams& max_params) const override;

  struct Impl;

 private:
  friend class InPlaceGraph;  // strata/in_place_graph.h: makes the decoupled layout growable
  explicit GraphIndex(std::unique_ptr<Impl> impl);
  // Shared with every Searcher, which may outlive this object.
  std::shared_ptr<const Impl> impl_;
};

}  // namespace strata

#endif  // STRATA_GRAPH_INDEX_H_
