#include "graph/robust_prune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace strata::graph {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Owns the rows so the view stays valid for the test's lifetime.
struct Points {
  Points(std::vector<float> r, std::size_t d, Metric metric) : rows(std::move(r)) {
    view = VectorView::Create(rows, d, metric).value();
  }
  std::vector<float> rows;
  VectorView view;

  std::vector<Neighbor> Pool(NodeId p, std::vector<NodeId> ids) const {
    std::vector<Neighbor> pool;
    for (const NodeId id : ids) pool.push_back({id, view.Distance(p, id)});
    return pool;
  }
  std::vector<NodeId> Prune(NodeId p, std::vector<NodeId> ids, PruneParams params) const {
    auto pool = Pool(p, ids);
    PruneScratch scratch;
    std::vector<NodeId> out;
    RobustPrune(p, &pool, params, view, &scratch, &out);
    return out;
  }
};

PruneParams Fixed(float alpha, std::uint32_t r = 64) {
  return {.max_degree = r, .alpha = alpha, .schedule = AlphaSchedule::kFixed};
}
PruneParams Rising(float alpha, std::uint32_t r = 64) {
  return {.max_degree = r, .alpha = alpha, .schedule = AlphaSchedule::kRising};
}

using Ids = std::vector<NodeId>;

TEST(OcclusionFactor, L2IsRatioAndInfiniteForDuplicates) {
  EXPECT_FLOAT_EQ(OcclusionFactor(Metric::kL2, 4.0f, 1.0f), 4.0f);
  EXPECT_FLOAT_EQ(OcclusionFactor(Metric::kL2, 1.0f, 4.0f), 0.25f);
  EXPECT_EQ(OcclusionFactor(Metric::kL2, 1.0f, 0.0f), kInf);
  EXPECT_FLOAT_EQ(OcclusionFactor(Metric::kCosine, 0.5f, 0.25f), 2.0f);
}

TEST(OcclusionFactor, InnerProductIsSignAware) {
  // c nearer p than s (d_pc <= d_sc): never occluded.
  EXPECT_EQ(OcclusionFactor(Metric::kInnerProduct, -3.0f, -2.0f), 0.0f);
  EXPECT_EQ(OcclusionFactor(Metric::kInnerProduct, 1.0f, 2.0f), 0.0f);
  // Both similarities positive: <s,c> / <p,c>.
  EXPECT_FLOAT_EQ(OcclusionFactor(Metric::kInnerProduct, -2.0f, -3.0f), 1.5f);
  // Both negative: ratio of the (positive) distances.
  EXPECT_FLOAT_EQ(OcclusionFactor(Metric::kInnerProduct, 3.0f, 2.0f), 1.5f);
  // <s,c> >= 0 >= <p,c>: occluded at any alpha.
  EXPECT_EQ(OcclusionFactor(Metric::kInnerProduct, 1.0f, -1.0f), kInf);
  EXPECT_EQ(OcclusionFactor(Metric::kInnerProduct, 1.0f, 0.0f), kInf);
}

// p = 0 at the origin, 1..3 on a ray: each point hides the next one.
Points Collinear() { return Points({0, 0, 1, 0, 2, 0, 3, 0}, 2, Metric::kL2); }

TEST(RobustPrune, AlphaOneKeepsOnlyTheNearestOnARay) {
  const Points pts = Collinear();
  EXPECT_EQ(pts.Prune(0, {1, 2, 3}, Fixed(1.0f)), Ids({1}));
  EXPECT_EQ(pts.Prune(0, {3, 2, 1}, Rising(1.0f)), Ids({1}));
}

TEST(RobustPrune, LargerAlphaKeepsLongerEdges) {
  const Points pts = Collinear();
  // Squared distances: d(0,2)/d(1,2) = 4, d(0,3)/d(1,3) = 2.25, d(0,3)/d(2,3) = 9.
  EXPECT_EQ(pts.Prune(0, {1, 2, 3}, Fixed(3.0f)), Ids({1, 3}));
  EXPECT_EQ(pts.Prune(0, {1, 2, 3}, Fixed(5.0f)), Ids({1, 2}));
  EXPECT_EQ(pts.Prune(0, {1, 2, 3}, Fixed(10.0f)), Ids({1, 2, 3}));
}

TEST(RobustPrune, RisingScheduleDiffersFromFixed) {
  const Points pts = Collinear();
  // Rising: 3 (factor 2.25) is taken at a lower level than 2 (factor 4), so
  // 2 no longer gets the chance to hide 3.
  EXPECT_EQ(pts.Prune(0, {1, 2, 3}, Rising(5.0f)), Ids({1, 2, 3}));
  // With R = 2: fixed takes the next nearest admissible (c = 2,0), rising
  // first exhausts what alpha = 1 admits (b = 0,2.5).
  const Points p2({0, 0, 1, 0, 2, 0, 0, 2.5f}, 2, Metric::kL2);
  EXPECT_EQ(p2.Prune(0, {1, 2, 3}, Fixed(5.0f, 2)), Ids({1, 2}));
  EXPECT_EQ(p2.Prune(0, {1, 2, 3}, Rising(5.0f, 2)), Ids({1, 3}));
}

TEST(RobustPrune, SpreadDirectionsAreAllKept) {
  const Points pts({0, 0, 1, 0, 0, 1.1f, -1.2f, 0, 0, -1.3f}, 2, Metric::kL2);
  EXPECT_EQ(pts.Prune(0, {1, 2, 3, 4}, Fixed(1.0f)), Ids({1, 2, 3, 4}));
  // R caps the list at the nearest ones.
  EXPECT_EQ(pts.Prune(0, {4, 3, 2, 1}, Fixed(1.0f, 2)), Ids({1, 2}));
  // C caps the candidates considered.
  PruneParams c2 = Fixed(1.0f);
  c2.max_occlusion_size = 3;
  EXPECT_EQ(pts.Prune(0, {1, 2, 3, 4}, c2), Ids({1, 2, 3}));
}

TEST(RobustPrune, DropsSelfDuplicatesAndIdenticalPoints) {
  // 1 and 2 are the same point: 2 is occluded at every alpha.
  const Points pts({0, 0, 1, 0, 1, 0, 0, 1}, 2, Metric::kL2);
  auto pool = pts.Pool(0, {2, 0, 1, 3, 1, 2, 0});
  PruneScratch scratch;
  std::vector<NodeId> out;
  RobustPrune(0, &pool, Fixed(16.0f), pts.view, &scratch, &out);
  EXPECT_EQ(out, Ids({1, 3}));
  // The pool comes back deduplicated, without the node, sorted.
  ASSERT_EQ(pool.size(), 3u);
  EXPECT_EQ(pool[0].id, 1u);
  EXPECT_EQ(pool[1].id, 2u);
  EXPECT_EQ(pool[2].id, 3u);
  // An empty or self-only pool gives an empty list.
  pool = pts.Pool(0, {0});
  RobustPrune(0, &pool, Fixed(1.2f), pts.view, &scratch, &out);
  EXPECT_TRUE(out.empty());
}

TEST(RobustPrune, SaturateFillsFreeSlotsNearestFirst) {
  const Points pts = Collinear();
  PruneParams p = Fixed(1.0f, 2);
  p.saturate = true;
  EXPECT_EQ(pts.Prune(0, {1, 2, 3}, p), Ids({1, 2}));
  p.max_degree = 5;
  EXPECT_EQ(pts.Prune(0, {1, 2, 3}, p), Ids({1, 2, 3}));
}

TEST(RobustPrune, InnerProductOcclusion) {
  // p = (1,0), s = (1,0.2), c = (0.9,1): <s,c> / <p,c> = 1.1 / 0.9 = 1.22.
  const Points pts({1, 0, 1, 0.2f, 0.9f, 1.0f}, 2, Metric::kInnerProduct);
  EXPECT_EQ(pts.Prune(0, {1, 2}, Fixed(1.2f)), Ids({1}));
  EXPECT_EQ(pts.Prune(0, {1, 2}, Fixed(1.25f)), Ids({1, 2}));
  EXPECT_EQ(pts.Prune(0, {1, 2}, Rising(1.2f)), Ids({1}));
}

// Independent reference: at each threshold level, walk candidates nearest
// first and take one if no already-selected nearer candidate occludes it.
float RefFactor(Metric m, float d_pc, float d_sc) {
  if (m != Metric::kInnerProduct) return d_sc <= 0 ? kInf : d_pc / d_sc;
  if (!(d_pc > d_sc)) return 0;
  if (d_sc > 0) return d_pc / d_sc;
  if (d_pc < 0) return d_sc / d_pc;
  return kInf;
}

Ids ReferencePrune(const VectorView& v, NodeId p, std::vector<Neighbor> pool, const PruneParams& o) {
  std::sort(pool.begin(), pool.end(), NeighborLess);
  if (pool.size() > o.max_occlusion_size) pool.resize(o.max_occlusion_size);
  std::vector<float> levels;
  if (o.schedule == AlphaSchedule::kFixed) {
    levels = {o.alpha};
  } else {
    for (float a = 1.0f;; a = std::min(a * 1.2f, o.alpha)) {
      levels.push_back(a);
      if (a >= o.alpha) break;
    }
  }
  std::vector<bool> taken(pool.size(), false);
  std::size_t count = 0;
  for (const float level : levels) {
    for (std::size_t i = 0; i < pool.size() && count < o.max_degree; ++i) {
      if (taken[i]) continue;
      float f = 0;
      for (std::size_t s = 0; s < i; ++s) {
        if (taken[s]) f = std::max(f, RefFactor(v.metric(), pool[i].distance,
                                                v.Distance(pool[s].id, pool[i].id)));
      }
      if (f <= level) {
        taken[i] = true;
        ++count;
      }
    }
  }
  Ids out;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    if (taken[i]) out.push_back(pool[i].id);
  }
  return out;
}

TEST(RobustPrune, MatchesReferenceOnRandomPools) {
  constexpr std::size_t kD = 8, kN = 200;
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> rows(kN * kD);
  for (float& x : rows) x = normal(rng);
  for (const Metric metric : {Metric::kL2, Metric::kInnerProduct}) {
    const Points pts(rows, kD, metric);
    for (int trial = 0; trial < 24; ++trial) {
      const NodeId p = rng() % kN;
      std::vector<NodeId> ids;
      for (NodeId i = 0; i < kN; ++i) {
        if (i != p && rng() % 2) ids.push_back(i);
      }
      PruneParams params{.max_degree = 4 + static_cast<std::uint32_t>(rng() % 20),
                         .alpha = std::vector<float>{1.0f, 1.2f, 1.5f, 2.0f}[trial % 4],
                         .max_occlusion_size = 40 + static_cast<std::uint32_t>(rng() % 80),
                         .schedule = trial % 8 < 4 ? AlphaSchedule::kFixed : AlphaSchedule::kRising};
      const Ids got = pts.Prune(p, ids, params);
      const Ids want = ReferencePrune(pts.view, p, pts.Pool(p, ids), params);
      EXPECT_EQ(got, want) << "metric " << static_cast<int>(metric) << " trial " << trial;
      EXPECT_LE(got.size(), params.max_degree);
    }
  }
}

TEST(RobustPrune, ReportsDistanceComputations) {
  const Points pts = Collinear();
  auto pool = pts.Pool(0, {1, 2, 3});
  PruneScratch scratch;
  std::vector<NodeId> out;
  // Fixed alpha 1: taking 1 scores 2 and 3 against it; both are then above
  // alpha for good, so nothing else is computed.
  EXPECT_EQ(RobustPrune(0, &pool, Fixed(1.0f), pts.view, &scratch, &out), 2u);
}

}  // namespace
}  // namespace strata::graph
