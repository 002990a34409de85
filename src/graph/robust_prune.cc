#include "graph/robust_prune.h"

#include <algorithm>
#include <limits>

namespace strata::graph {

namespace {
constexpr float kInf = std::numeric_limits<float>::infinity();
// Marks a candidate already selected (it must never be considered again).
constexpr float kTaken = std::numeric_limits<float>::max();
}  // namespace

float OcclusionFactor(Metric metric, float d_pc, float d_sc) {
  if (metric != Metric::kInnerProduct) {
    // Duplicates (d_sc == 0) are occluded outright; tiny negative values from
    // rounding of 1 - <x,y> on unit vectors are treated the same way.
    return d_sc <= 0.0f ? kInf : d_pc / d_sc;
  }
  if (d_pc <= d_sc) return 0.0f;          // c is at least as near p as s: keep
  if (d_sc > 0.0f) return d_pc / d_sc;    // both similarities negative
  if (d_pc < 0.0f) return d_sc / d_pc;    // both positive: <s,c> / <p,c> > 1
  return kInf;                            // <s,c> >= 0 >= <p,c>
}

void PreparePrunePool(NodeId node, std::uint32_t max_occlusion_size, std::vector<Neighbor>* pool) {
  std::vector<Neighbor>& p = *pool;
  // Deduplicate by id first (duplicates need not be adjacent in distance
  // order if the same id was scored in two places), drop the node itself,
  // then order by distance with ids breaking ties so results are deterministic.
  std::sort(p.begin(), p.end(), [](const Neighbor& a, const Neighbor& b) {
    return a.id < b.id || (a.id == b.id && a.distance < b.distance);
  });
  p.erase(std::unique(p.begin(), p.end(),
                      [](const Neighbor& a, const Neighbor& b) { return a.id == b.id; }),
          p.end());
  p.erase(std::remove_if(p.begin(), p.end(), [node](const Neighbor& x) { return x.id == node; }),
          p.end());
  std::sort(p.begin(), p.end(), NeighborLess);
  if (p.size() > max_occlusion_size) p.resize(max_occlusion_size);
}

std::uint64_t RobustPrune(NodeId node, std::vector<Neighbor>* pool, const PruneParams& params,
                          const VectorView& vectors, PruneScratch* scratch,
                          std::vector<NodeId>* out) {
  out->clear();
  std::vector<Neighbor>& p = *pool;
  PreparePrunePool(node, params.max_occlusion_size, pool);
  if (p.empty() || params.max_degree == 0) return 0;

  const std::size_t m = p.size();
  const std::size_t r = params.max_degree;
  const Metric metric = vectors.metric();
  std::vector<float>& occ = scratch->occlusion;
  occ.assign(m, 0.0f);
  std::uint64_t distance_computations = 0;
  std::size_t taken = 0;

  // With kRising the threshold starts at 1 (strict RNG-like pruning) and is
  // relaxed in x1.2 steps only while slots remain, ending exactly at alpha
  // (DiskANN stops at the last power of 1.2 below alpha, which for alpha = 1.3
  // would never use 1.3; ending at alpha makes the option mean what it says).
  float level = params.schedule == AlphaSchedule::kRising ? 1.0f : params.alpha;
  for (;;) {
    for (std::size_t i = 0; i < m && taken < r; ++i) {
      if (occ[i] > level) continue;
      occ[i] = kTaken;
      ++taken;
      const NodeId s = p[i].id;
      for (std::size_t j = i + 1; j < m; ++j) {
        // Above alpha a candidate can never be selected at any level, so its
        // factor no longer matters; skipping it saves most distance work.
        if (occ[j] > params.alpha) continue;
        if (params.labels != nullptr && !params.labels->SharedCoveredBy(node, p[j].id, s)) continue;
        const float d_sc = vectors.Distance(s, p[j].id);
        ++distance_computations;
        occ[j] = std::max(occ[j], OcclusionFactor(metric, p[j].distance, d_sc));
      }
    }
    if (taken >= r || level >= params.alpha) break;
    level = std::min(level * 1.2f, params.alpha);
  }

  if (params.saturate) {
    for (std::size_t i = 0; i < m && taken < r; ++i) {
      if (occ[i] != kTaken) {
        occ[i] = kTaken;
        ++taken;
      }
    }
  }
  // Pool order is distance order, so walking it yields the selection sorted.
  out->reserve(taken);
  for (std::size_t i = 0; i < m; ++i) {
    if (occ[i] == kTaken) out->push_back(p[i].id);
  }
  return distance_computations;
}

}  // namespace strata::graph
