// Loading the graph of an existing graph index back into RAM, in row (external
// id) order, so that a new index can be written with another layout or other
// codes without building the graph again (Starling's relayout, and the
// ablation's variants of one graph).
#ifndef STRATA_INDEX_GRAPH_LOADER_H_
#define STRATA_INDEX_GRAPH_LOADER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/vamana_builder.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata {

// Reads every record of the graph index in `dir` (sequential reads, 16 MiB at
// a time) and returns its graph with rows as node ids. InvalidArgument if the
// index does not hold `rows` x `dim` vectors under `metric` with max degree
// `max_degree`; Corruption / IOError from the files. With `vectors`, also
// returns every row's record vector widened to float32 (rows x dim, as
// stored: normalised float records under cosine).
Result<graph::VamanaGraph> LoadGraphFromIndex(const std::string& dir, std::uint64_t rows,
                                              std::uint32_t dim, Metric metric,
                                              std::uint32_t max_degree,
                                              std::vector<float>* vectors = nullptr);

}  // namespace strata

#endif  // STRATA_INDEX_GRAPH_LOADER_H_
