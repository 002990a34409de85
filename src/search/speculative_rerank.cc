#include "search/speculative_rerank.h"

#include <algorithm>

namespace strata::search {
namespace {

// Ids of the exact top-k of `exact` (sorted copy), in rank order.
std::vector<graph::Neighbor> TopK(const std::vector<graph::Neighbor>& exact, std::uint32_t k) {
  std::vector<graph::Neighbor> top = exact;
  const std::size_t n = std::min<std::size_t>(k, top.size());
  std::partial_sort(top.begin(), top.begin() + n, top.end(), graph::NeighborLess);
  top.resize(n);
  return top;
}

bool SameIds(const std::vector<graph::Neighbor>& a, const std::vector<graph::Neighbor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id) return false;
  }
  return true;
}

}  // namespace

Result<SpeculativeRerankResult> SpeculativeRerank(std::span<const graph::Neighbor> candidates,
                                                  std::uint32_t k, std::uint32_t group_size,
                                                  VectorFetcher* fetcher) {
  if (k == 0 || group_size == 0) {
    return Status::InvalidArgument("speculative re-rank: k and group size must be at least 1");
  }
  SpeculativeRerankResult out;
  const std::size_t n = candidates.size();
  if (n == 0) return out;
  auto group = [&](std::size_t g) {
    const std::size_t begin = std::min(n, g * group_size);
    return std::pair<std::size_t, std::size_t>{begin, std::min(n, begin + group_size)};
  };
  std::vector<graph::NodeId> ids;
  auto submit = [&](std::size_t g) -> Status {
    const auto [b, e] = group(g);
    ids.clear();
    for (std::size_t i = b; i < e; ++i) ids.push_back(candidates[i].id);
    return fetcher->Submit(ids);
  };
  const std::size_t num_groups = (n + group_size - 1) / group_size;
  STRATA_RETURN_IF_ERROR(submit(0));
  std::vector<float> dist(group_size);
  std::vector<graph::Neighbor> previous;
  for (std::size_t g = 0; g < num_groups; ++g) {
    const bool more = g + 1 < num_groups;
    if (more) STRATA_RETURN_IF_ERROR(submit(g + 1));  // speculative: overlaps this group's compute
    const auto [b, e] = group(g);
    STRATA_RETURN_IF_ERROR(fetcher->Collect(std::span<float>(dist.data(), e - b)));
    for (std::size_t i = b; i < e; ++i) out.exact.push_back({candidates[i].id, dist[i - b]});
    ++out.groups;
    std::vector<graph::Neighbor> top = TopK(out.exact, k);
    const bool settled = g > 0 && SameIds(top, previous);
    previous = std::move(top);
    if (settled) {
      if (more) {  // collect the speculative group in flight; its distances are exact too
        const auto [b2, e2] = group(g + 1);
        STRATA_RETURN_IF_ERROR(fetcher->Collect(std::span<float>(dist.data(), e2 - b2)));
        for (std::size_t i = b2; i < e2; ++i) out.exact.push_back({candidates[i].id, dist[i - b2]});
        ++out.groups;
      }
      break;
    }
  }
  out.top = TopK(out.exact, k);
  return out;
}

}  // namespace strata::search
