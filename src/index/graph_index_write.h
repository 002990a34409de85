// Writing a graph index's files from its parts (rows, PQ quantizer and
// codes, graph): the common tail of BuildGraphIndex and MergeGraphIndex.
#ifndef STRATA_INDEX_GRAPH_INDEX_WRITE_H_
#define STRATA_INDEX_GRAPH_INDEX_WRITE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/timer.h"
#include "graph/vamana_builder.h"
#include "quant/pq/product_quantizer.h"
#include "strata/graph_index.h"

namespace strata {

// What an index is written from. Rows are numbered as the graph's nodes.
struct GraphIndexContents {
  ElementType type = ElementType::kFloat32;  // stored element type of the records
  std::uint32_t dim = 0;
  std::uint64_t n = 0;
  std::span<const float> values;      // n x dim: the records' vectors (cosine: normalised floats)
  std::span<const float> graph_rows;  // n x dim: what the graph was built on (unit rows under cosine)
  const quant::ProductQuantizer* pq = nullptr;
  std::vector<std::uint8_t>* codes = nullptr;  // n x code_size, by row; released while writing
  const graph::VamanaGraph* graph = nullptr;
  // Rows the PQ codebook was trained on (manifest "pq_trained_rows"), so a
  // later merge knows how far the data has grown past its training.
  std::uint64_t pq_trained_rows = 0;
};

// Trains the graph index's PQ/OPQ quantizer on `n` rows (n x dim) with the
// build's code-size, centring and OPQ rules.
Result<quant::ProductQuantizer> TrainGraphQuantizer(const float* rows, std::uint64_t n,
                                                    std::uint32_t dim,
                                                    const GraphBuildOptions& options);
// How many of `n` rows TrainGraphQuantizer samples.
std::uint64_t GraphQuantizerTrainRows(std::uint64_t n, const GraphBuildOptions& options);

// Lays the rows out (page shuffle per `options`), builds the MemGraph, and
// writes every file aside, switching `index_dir` over once complete. Fills
// the report's layout, MemGraph, write and total fields (`total` is the
// build's clock).
Status WriteGraphIndex(const GraphIndexContents& contents, const std::string& index_dir,
                       const GraphBuildOptions& options, const BuildProgress& progress,
                       const Timer& total, GraphBuildReport* report);

}  // namespace strata

#endif  // STRATA_INDEX_GRAPH_INDEX_WRITE_H_
