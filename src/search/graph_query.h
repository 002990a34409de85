// What every search over a graph index's layouts (the node file's packed or
// shuffled records, or the decoupled edge and vector files) does with a
// query before it walks: checks it, normalises it under cosine and builds
// its PQ distance table.
#ifndef STRATA_SEARCH_GRAPH_QUERY_H_
#define STRATA_SEARCH_GRAPH_QUERY_H_

#include <span>
#include <vector>

#include "quant/pq/product_quantizer.h"
#include "search/graph_index_data.h"
#include "strata/result.h"
#include "strata/search.h"

namespace strata::search {

// Validates `params` (L >= k, W at most the context's `max_beam_width`, k
// at most the `result_slots` of the caller's buffers) and `query` (the
// index's dimension, finite, non-zero under cosine); writes the query in the
// index's distance space into `out` (resized) and its PQ table into `table`.
// InvalidArgument naming the fault.
Status PrepareGraphQuery(const GraphIndexData& index, std::span<const float> query,
                         const SearchParams& params, std::uint32_t max_beam_width,
                         std::size_t result_slots, std::vector<float>* out,
                         quant::PqDistanceTable* table);

}  // namespace strata::search

#endif  // STRATA_SEARCH_GRAPH_QUERY_H_
