// SearchBatch: a batch of queries over any index type, one searcher and one
// query in flight per thread.
#include <algorithm>
#include <string>

#include "base/parallel.h"
#include "base/timer.h"
#include "strata/index.h"

namespace strata {

Result<BatchSearchResult> SearchBatch(const Index& index, const VectorMatrix& queries,
                                      const SearchParams& params, unsigned threads) {
  return SearchBatch(index, queries, params, threads, nullptr);
}

Result<BatchSearchResult> SearchBatch(const Index& index, const VectorMatrix& queries,
                                      const SearchParams& params, unsigned threads,
                                      const QueryParamsFn& params_of) {
  STRATA_RETURN_IF_ERROR(params.Validate());
  if (queries.element_type() != ElementType::kFloat32) {
    return Status::InvalidArgument("queries must be float32 (read them with ReadAllAsFloat)");
  }
  if (queries.dim() != index.dim()) {
    return Status::InvalidArgument("queries have dimension " + std::to_string(queries.dim()) +
                                   " but the index has " + std::to_string(index.dim()));
  }
  if (threads == 0) threads = DefaultThreads();
  const std::size_t nq = queries.rows();
  threads = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(threads, nq)));
  // RaBitQ-SSD's Q: 16 reads in flight per IVF query up to 16 threads, 8 beyond
  // (more threads already keep the device busy).
  SearchParams run_params = params;
  if (run_params.inflight == 0 && threads > 16) run_params.inflight = 8;
  SearchParams max_params = run_params;
  max_params.beam_width = std::max<std::uint32_t>(params.beam_width, 4);
  std::vector<std::unique_ptr<Searcher>> searchers;
  for (unsigned t = 0; t < threads; ++t) {
    STRATA_ASSIGN_OR_RETURN(auto s, index.NewSearcher(max_params));
    searchers.push_back(std::move(s));
  }
  BatchSearchResult out;
  out.results.num_queries = nq;
  out.results.k = params.k;
  out.results.ids.assign(nq * params.k, kInvalidVectorId);
  out.results.distances.assign(nq * params.k, 0.0f);
  out.stats.resize(nq);
  std::vector<Status> errors(threads);
  const std::span<const float> all = queries.values<float>();
  const Timer timer;
  // One query per thread in flight; queries handed out dynamically.
  ParallelFor(
      nq, threads,
      [&](std::size_t q, unsigned t) {
        if (!errors[t].ok()) return;
        SearchParams query_params = run_params;
        if (params_of) params_of(q, &query_params);
        errors[t] = searchers[t]->Search(
            all.subspan(q * queries.dim(), queries.dim()), query_params,
            std::span<VectorId>(out.results.ids).subspan(q * params.k, params.k),
            std::span<float>(out.results.distances).subspan(q * params.k, params.k),
            &out.stats[q]);
      },
      1);
  out.seconds = timer.ElapsedSeconds();
  for (const Status& s : errors) STRATA_RETURN_IF_ERROR(s);
  return out;
}

}  // namespace strata
