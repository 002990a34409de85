#include "search/graph_query.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace strata::search {

Status PrepareGraphQuery(const GraphIndexData& index, std::span<const float> query,
                         const SearchParams& params, std::uint32_t max_beam_width,
                         std::size_t result_slots, std::vector<float>* out,
                         quant::PqDistanceTable* table) {
  STRATA_RETURN_IF_ERROR(params.Validate());
  if (params.list_size < params.k) {
    return Status::InvalidArgument("L (" + std::to_string(params.list_size) +
                                   ") must be at least k (" + std::to_string(params.k) + ")");
  }
  if (params.beam_width > max_beam_width) {
    return Status::InvalidArgument("beam width " + std::to_string(params.beam_width) +
                                   " exceeds this context's maximum " +
                                   std::to_string(max_beam_width));
  }
  if (result_slots < params.k) return Status::InvalidArgument("result buffers smaller than k");
  if (query.size() != index.dim()) {
    return Status::InvalidArgument("query has dimension " + std::to_string(query.size()) +
                                   ", the index " + std::to_string(index.dim()));
  }
  for (float v : query) {
    if (!std::isfinite(v)) return Status::InvalidArgument("query contains NaN or Inf");
  }
  out->assign(query.begin(), query.end());
  if (index.metric == Metric::kCosine && !kernels::NormalizeInPlace(out->data(), out->size())) {
    return Status::InvalidArgument("zero query vector has no cosine distance");
  }
  // Under cosine the codes are of unit vectors and the query is normalised:
  // L2 tables rank exactly as cosine would (||q - x||^2 = 2 - 2 cos), and
  // suit codes trained centred.
  const Metric table_metric = index.metric == Metric::kCosine ? Metric::kL2 : index.metric;
  return index.pq.ComputeDistanceTable(out->data(), table_metric, table);
}

}  // namespace strata::search
