// GraphIndex's state, shared with the in-place graph (in_place_graph.cc),
// which opens a graph index and makes its decoupled layout growable before
// any searcher exists.
#ifndef STRATA_INDEX_GRAPH_INDEX_IMPL_H_
#define STRATA_INDEX_GRAPH_INDEX_IMPL_H_

#include <optional>

#include "format/manifest.h"
#include "search/decoupled_search.h"
#include "search/graph_index_data.h"
#include "strata/graph_index.h"

namespace strata {

struct GraphIndex::Impl {
  search::GraphIndexData data;
  std::optional<search::DecoupledGraphData> decoupled;  // OpenOptions::decoupled_dir
  format::Manifest manifest;
  OpenOptions options;
};

}  // namespace strata

#endif  // STRATA_INDEX_GRAPH_INDEX_IMPL_H_
