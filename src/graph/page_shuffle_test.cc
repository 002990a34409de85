#include "graph/page_shuffle.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <vector>

#include "base/random.h"
#include "graph/test_data.h"
#include "graph/vamana_builder.h"

namespace strata::graph {
namespace {

// Neighbour lists as plain vectors; converted to both graph forms.
using Lists = std::vector<std::vector<NodeId>>;

struct Csr {
  std::vector<std::uint64_t> offsets;
  std::vector<NodeId> ids;
  CsrGraphView View() const { return CsrGraphView{offsets, ids}; }
};

Csr ToCsr(const Lists& lists) {
  Csr c;
  c.offsets.push_back(0);
  for (const auto& l : lists) {
    c.ids.insert(c.ids.end(), l.begin(), l.end());
    c.offsets.push_back(c.ids.size());
  }
  return c;
}

FlatAdjacency ToFlat(const Lists& lists) {
  std::size_t cap = 1;
  for (const auto& l : lists) cap = std::max(cap, l.size());
  auto g = FlatAdjacency::Create(lists.size(), static_cast<std::uint32_t>(cap)).value();
  for (NodeId i = 0; i < lists.size(); ++i) g.Set(i, lists[i]);
  return g;
}

Lists FromFlat(const FlatAdjacency& g) {
  Lists lists(g.size());
  for (NodeId i = 0; i < g.size(); ++i) {
    lists[i].assign(g.Neighbors(i).begin(), g.Neighbors(i).end());
  }
  return lists;
}

// A uniformly random permutation of 0..n-1.
std::vector<NodeId> Permutation(std::size_t n, std::uint64_t seed) {
  std::vector<NodeId> p(n);
  std::iota(p.begin(), p.end(), 0);
  Xoshiro256 rng(seed);
  for (std::size_t i = n; i > 1; --i) std::swap(p[i - 1], p[rng.Below(i)]);
  return p;
}

// The textbook definition, straight from OctopusANN §3.1: for every node u,
// |N(u) ∩ B(u) \ {u}| / (C - 1) with set intersection, averaged over u.
double BruteForceOverlap(const Lists& lists, const PagePartition& part) {
  const std::uint32_t c = part.records_per_page;
  if (lists.empty() || c <= 1) return 0.0;
  double sum = 0.0;
  for (NodeId u = 0; u < lists.size(); ++u) {
    std::set<NodeId> page;
    for (std::uint32_t v : part.Page(part.page_of[u])) {
      if (v != kEmptySlot && v != u) page.insert(v);
    }
    const std::set<NodeId> nbrs(lists[u].begin(), lists[u].end());
    std::vector<NodeId> both;
    std::set_intersection(page.begin(), page.end(), nbrs.begin(), nbrs.end(),
                          std::back_inserter(both));
    sum += static_cast<double>(both.size()) / (c - 1);
  }
  return sum / static_cast<double>(lists.size());
}

// Random directed graph without duplicate ids; some self-loops and isolated
// nodes on purpose.
Lists RandomGraph(std::size_t n, std::size_t max_degree, std::uint64_t seed) {
  Xoshiro256 rng(seed);
  Lists lists(n);
  for (std::size_t u = 0; u < n; ++u) {
    const std::size_t d = rng.Below(max_degree + 1);
    std::set<NodeId> s;
    while (s.size() < d) s.insert(static_cast<NodeId>(rng.Below(n)));
    lists[u].assign(s.begin(), s.end());
  }
  return lists;
}

// A random assignment of the nodes to ceil(n / C) pages, last page short.
PagePartition RandomPartition(std::size_t n, std::uint32_t c, std::uint64_t seed) {
  PagePartition part = IdentityPartition(n, c).value();
  const std::vector<NodeId> perm = Permutation(n, seed);
  for (std::size_t i = 0; i < n; ++i) {
    part.members[i] = perm[i];
    part.page_of[perm[i]] = static_cast<std::uint32_t>(i / c);
    part.slot_of[perm[i]] = static_cast<std::uint32_t>(i % c);
  }
  return part;
}

// A cycle over a random relabelling of n nodes, each node linked to both ring
// neighbours (so id order carries no locality).
Lists PermutedRing(std::size_t n, std::uint64_t seed) {
  const std::vector<NodeId> label = Permutation(n, seed);
  Lists lists(n);
  for (std::size_t i = 0; i < n; ++i) {
    lists[label[i]] = {label[(i + 1) % n], label[(i + n - 1) % n]};
  }
  return lists;
}

// A side x side 4-neighbour grid over a random relabelling.
Lists PermutedGrid(std::size_t side, std::uint64_t seed) {
  const std::vector<NodeId> label = Permutation(side * side, seed);
  Lists lists(side * side);
  for (std::size_t r = 0; r < side; ++r) {
    for (std::size_t c = 0; c < side; ++c) {
      auto& l = lists[label[r * side + c]];
      if (r > 0) l.push_back(label[(r - 1) * side + c]);
      if (r + 1 < side) l.push_back(label[(r + 1) * side + c]);
      if (c > 0) l.push_back(label[r * side + c - 1]);
      if (c + 1 < side) l.push_back(label[r * side + c + 1]);
    }
  }
  return lists;
}

PageShuffleOptions Options(std::uint32_t c, int rounds = 8, unsigned threads = 1, int swaps = 1) {
  return PageShuffleOptions{.records_per_page = c,
                            .refine_rounds = rounds,
                            .swap_passes = swaps,
                            .seed = 3,
                            .threads = threads};
}

// Runs the shuffle on the CSR form and checks what every result must satisfy.
PagePartition ShuffleChecked(const Lists& lists, const PageShuffleOptions& options,
                             PageShuffleReport* report = nullptr) {
  const Csr csr = ToCsr(lists);
  auto r = ShufflePages(csr.View(), options, report);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  PagePartition part = std::move(r).value();
  EXPECT_TRUE(ValidatePartition(part, lists.size()).ok());
  EXPECT_EQ(part.num_pages(),
            (lists.size() + options.records_per_page - 1) / options.records_per_page);
  return part;
}

TEST(PageShuffleOptions, ValidateRejectsBadFields) {
  EXPECT_TRUE(Options(5).Validate().ok());
  EXPECT_FALSE(Options(0).Validate().ok());
  EXPECT_FALSE(Options(5, -1).Validate().ok());
  EXPECT_FALSE(Options(5, 257).Validate().ok());
  PageShuffleOptions bad_swaps = Options(5);
  bad_swaps.swap_passes = -1;
  EXPECT_FALSE(bad_swaps.Validate().ok());
  const Csr csr = ToCsr(RandomGraph(10, 3, 1));
  EXPECT_EQ(ShufflePages(csr.View(), Options(0)).status().code(), StatusCode::kInvalidArgument);
}

TEST(IdentityPartition, PacksNodesInIdOrder) {
  const PagePartition p = IdentityPartition(12, 5).value();
  EXPECT_EQ(p.num_pages(), 3u);
  EXPECT_EQ(p.num_nodes(), 12u);
  EXPECT_EQ(p.members, (std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, kEmptySlot,
                                                   kEmptySlot, kEmptySlot}));
  EXPECT_EQ(p.page_of[7], 1u);
  EXPECT_EQ(p.slot_of[7], 2u);
  EXPECT_TRUE(ValidatePartition(p, 12).ok());
  EXPECT_EQ(IdentityPartition(0, 5).value().num_pages(), 0u);
  EXPECT_TRUE(ValidatePartition(IdentityPartition(0, 5).value(), 0).ok());
  EXPECT_FALSE(IdentityPartition(4, 0).ok());
}

TEST(ValidatePartition, DetectsEveryDefect) {
  const PagePartition good = RandomPartition(23, 5, 9);
  ASSERT_TRUE(ValidatePartition(good, 23).ok());
  EXPECT_FALSE(ValidatePartition(good, 22).ok());  // wrong n
  EXPECT_FALSE(ValidatePartition(good, 26).ok());  // needs 6 pages

  PagePartition extra_page = good;  // an extra empty page: page count != ceil(n/C)
  extra_page.members.resize(extra_page.members.size() + 5, kEmptySlot);
  EXPECT_FALSE(ValidatePartition(extra_page, 23).ok());

  PagePartition bad_slot = good;
  bad_slot.slot_of[4] = (bad_slot.slot_of[4] + 1) % 5;
  EXPECT_FALSE(ValidatePartition(bad_slot, 23).ok());

  PagePartition bad_page = good;
  bad_page.page_of[4] = 7;
  EXPECT_FALSE(ValidatePartition(bad_page, 23).ok());

  PagePartition duplicate = good;  // a node copied into an empty slot
  duplicate.members[23] = duplicate.members[0];
  EXPECT_FALSE(ValidatePartition(duplicate, 23).ok());

  PagePartition hole = good;  // last page [a, b, -, -, -] -> [-, b, a, -, -]
  std::swap(hole.members[20], hole.members[22]);
  hole.slot_of[hole.members[22]] = 2;
  EXPECT_FALSE(ValidatePartition(hole, 23).ok());

  PagePartition zero = good;
  zero.records_per_page = 0;
  EXPECT_FALSE(ValidatePartition(zero, 23).ok());
}

TEST(OverlapRatio, EqualsBruteForceDefinition) {
  for (std::uint32_t c : {2u, 5u, 8u}) {
    const Lists lists = RandomGraph(700, 12, 100 + c);
    // Add self-loops: they must not count.
    Lists with_loops = lists;
    for (NodeId u = 0; u < with_loops.size(); u += 7) with_loops[u].push_back(u);
    const Csr csr = ToCsr(with_loops);
    const FlatAdjacency flat = ToFlat(with_loops);
    for (std::uint64_t seed : {1u, 2u}) {
      const PagePartition part = RandomPartition(lists.size(), c, seed);
      const double expected = BruteForceOverlap(lists, part);
      EXPECT_NEAR(OverlapRatio(csr.View(), part, 1).value(), expected, 1e-12);
      EXPECT_NEAR(OverlapRatio(flat, part, 2).value(), expected, 1e-12);
    }
    const PagePartition shuffled = ShuffleChecked(with_loops, Options(c));
    EXPECT_NEAR(OverlapRatio(csr.View(), shuffled).value(), BruteForceOverlap(lists, shuffled),
                1e-12);
  }
}

TEST(OverlapRatio, RejectsMismatchedInput) {
  const Csr csr = ToCsr(RandomGraph(30, 4, 5));
  EXPECT_FALSE(OverlapRatio(csr.View(), IdentityPartition(29, 5).value()).ok());
  const Csr bad = ToCsr({{1}, {7}});  // id 7 >= n = 2
  EXPECT_FALSE(OverlapRatio(bad.View(), IdentityPartition(2, 2).value()).ok());
}

// On a cycle with C < n, the C nodes of one page induce a union of paths: at
// most C - 1 undirected edges, each counted from both ends, so
// sum_{u in page} |N(u) ∩ B(u)| <= 2 (C - 1) and OR <= 2 (C - 1) / (C (C - 1))
// = 2 / C, reached exactly by cutting the ring into arcs of C consecutive
// nodes. The relabelled ring hides that order from id-order packing.
TEST(ShufflePages, NearlyOptimalOnRing) {
  constexpr std::size_t kN = 1200;
  for (std::uint32_t c : {4u, 6u}) {
    const Lists ring = PermutedRing(kN, 77 + c);
    const Csr csr = ToCsr(ring);
    const double optimum = 2.0 / c;
    PageShuffleReport report;
    const PagePartition part = ShuffleChecked(ring, Options(c), &report);
    const double shuffled = OverlapRatio(csr.View(), part).value();
    const double identity = OverlapRatio(csr.View(), IdentityPartition(kN, c).value()).value();
    EXPECT_LE(shuffled, optimum + 1e-12);
    EXPECT_GE(shuffled, 0.85 * optimum) << "C=" << c;
    EXPECT_LT(identity, 0.1 * optimum);
    EXPECT_DOUBLE_EQ(report.final_overlap_ratio, shuffled);
    EXPECT_DOUBLE_EQ(report.identity_overlap_ratio, identity);
  }
}

// In a 4-neighbour grid, 4 nodes induce at most 4 edges (a 2x2 square), so
// with C = 4 the per-page sum is <= 8 and OR <= 8 / (4 * 3) = 2/3, reached by
// tiling with 2x2 squares.
TEST(ShufflePages, CloseToOptimalOnGrid) {
  constexpr std::size_t kSide = 40;
  const Lists grid = PermutedGrid(kSide, 5);
  const Csr csr = ToCsr(grid);
  const PagePartition part = ShuffleChecked(grid, Options(4));
  const double shuffled = OverlapRatio(csr.View(), part).value();
  EXPECT_LE(shuffled, 2.0 / 3.0 + 1e-12);
  EXPECT_GE(shuffled, 0.42);
  EXPECT_LT(OverlapRatio(csr.View(), IdentityPartition(kSide * kSide, 4).value()).value(), 0.05);
}

// The graph the shuffle is for: Vamana over clustered points (ids in random
// cluster order, as in real data sets).
class VamanaShuffle : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    constexpr std::size_t kN = 4000, kD = 16;
    rows_ = new std::vector<float>(testing::GaussianMixture(kN, kD, 40, 11));
    auto g = BuildVamana(*rows_, kD,
                         VamanaBuildOptions{.metric = Metric::kL2,
                                            .max_degree = 24,
                                            .search_list_size = 48,
                                            .num_threads = 1,
                                            .seed = 5});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    lists_ = new Lists(FromFlat(g.value().adjacency()));
  }
  static void TearDownTestSuite() {
    delete rows_;
    delete lists_;
  }
  static std::vector<float>* rows_;
  static Lists* lists_;
};
std::vector<float>* VamanaShuffle::rows_ = nullptr;
Lists* VamanaShuffle::lists_ = nullptr;

TEST_F(VamanaShuffle, RaisesOverlapFarAboveIdOrder) {
  const Lists& lists = *lists_;
  const Csr csr = ToCsr(lists);
  PageShuffleReport report;
  const PagePartition part = ShuffleChecked(lists, Options(5, 8), &report);
  const double identity =
      OverlapRatio(csr.View(), IdentityPartition(lists.size(), 5).value()).value();
  const double shuffled = OverlapRatio(csr.View(), part).value();
  EXPECT_NEAR(shuffled, BruteForceOverlap(lists, part), 1e-12);
  EXPECT_GT(shuffled, 0.3);
  EXPECT_GT(shuffled, 10 * identity);
  // LDG refinement must improve on the breadth-first fill it starts from,
  // and the swap pass on the best LDG round.
  ASSERT_EQ(report.phases.size(), 2u + 8u + 1u);
  EXPECT_EQ(report.phases[0].name, "reverse");
  EXPECT_EQ(report.phases[1].name, "fill");
  EXPECT_EQ(report.phases[10].name, "swap1");
  const double fill = report.phases[1].overlap_ratio;
  double best_ldg = 0.0;
  for (int r = 2; r < 10; ++r) best_ldg = std::max(best_ldg, report.phases[r].overlap_ratio);
  EXPECT_GT(best_ldg, fill * 1.05);
  EXPECT_GT(shuffled, best_ldg * 1.05);
  EXPECT_EQ(report.best_phase, "swap1");
  EXPECT_GT(report.swaps, 0u);
  // The returned partition is the best phase's.
  double best = 0.0;
  for (const auto& ph : report.phases) best = std::max(best, ph.overlap_ratio);
  EXPECT_DOUBLE_EQ(best, shuffled);
  EXPECT_EQ(report.num_pages, 800u);
  EXPECT_EQ(report.short_pages, 0u);
  std::uint64_t edges = 0;
  for (const auto& l : lists) edges += l.size();
  EXPECT_EQ(report.edges, edges);
  // Zero rounds and no swaps returns the fill itself.
  PageShuffleReport fill_only;
  PageShuffleOptions none = Options(5, 0);
  none.swap_passes = 0;
  const PagePartition filled = ShuffleChecked(lists, none, &fill_only);
  EXPECT_DOUBLE_EQ(OverlapRatio(csr.View(), filled).value(), fill);
  EXPECT_EQ(fill_only.best_phase, "fill");
}

TEST_F(VamanaShuffle, DeterministicAndThreadCountIndependent) {
  const Lists& lists = *lists_;
  const Csr csr = ToCsr(lists);
  const PagePartition a = ShufflePages(csr.View(), Options(5, 4, 1)).value();
  const PagePartition b = ShufflePages(csr.View(), Options(5, 4, 1)).value();
  const PagePartition c = ShufflePages(csr.View(), Options(5, 4, 2)).value();
  const PagePartition d = ShufflePages(ToFlat(lists), Options(5, 4, 3)).value();
  EXPECT_EQ(a.members, b.members);
  EXPECT_EQ(a.page_of, b.page_of);
  EXPECT_EQ(a.slot_of, b.slot_of);
  EXPECT_EQ(a.members, c.members);
  EXPECT_EQ(a.members, d.members);
  PageShuffleOptions other = Options(5, 4, 1);
  other.seed = 4;
  EXPECT_NE(ShufflePages(csr.View(), other).value().members, a.members);
}

// Two 4-cliques A = {0, 2, 4, 6} and B = {1, 3, 5, 7}, plus an edge 0 -> 1
// listed first: the breadth-first fill packs {0, 1, 2, 4} and {3, 5, 6, 7}
// (in-page neighbours 3, 0, 2, 2 and 2, 2, 0, 2: OR = 13 / 3 / 8); swapping
// 1 and 6 gives the optimum, both cliques whole (OR 1).
TEST(ShufflePages, SwapPassRepairsAMisplacedPair) {
  Lists lists(8);
  for (NodeId base : {0u, 1u}) {
    for (NodeId i = base; i < 8; i += 2) {
      for (NodeId j = base; j < 8; j += 2) {
        if (i != j) lists[i].push_back(j);
      }
    }
  }
  lists[0].insert(lists[0].begin(), 1);
  const Csr csr = ToCsr(lists);
  PageShuffleOptions options = Options(4, 0);
  options.swap_passes = 0;
  const PagePartition filled = ShuffleChecked(lists, options);
  EXPECT_EQ(filled.members, (std::vector<std::uint32_t>{0, 1, 2, 4, 3, 5, 6, 7}));
  EXPECT_DOUBLE_EQ(OverlapRatio(csr.View(), filled).value(), 13.0 / 3.0 / 8.0);
  options.swap_passes = 3;
  PageShuffleReport report;
  const PagePartition swapped = ShuffleChecked(lists, options, &report);
  EXPECT_EQ(swapped.members, (std::vector<std::uint32_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  EXPECT_DOUBLE_EQ(OverlapRatio(csr.View(), swapped).value(), 1.0);
  EXPECT_EQ(report.swaps, 1u);
  // The second pass finds nothing and ends the passes.
  ASSERT_EQ(report.phases.size(), 4u);
  EXPECT_EQ(report.phases[3].name, "swap2");
  EXPECT_EQ(report.best_phase, "swap1");
}

TEST(ShufflePages, FewerNodesThanOnePage) {
  const Lists lists = {{1, 2}, {0}, {}};
  const PagePartition part = ShuffleChecked(lists, Options(5));
  EXPECT_EQ(part.num_pages(), 1u);
  EXPECT_EQ(part.members, (std::vector<std::uint32_t>{0, 1, 2, kEmptySlot, kEmptySlot}));
  // Node 0 sees both neighbours, node 1 sees node 0: (2 + 1 + 0) / 4 / 3.
  EXPECT_DOUBLE_EQ(OverlapRatio(ToCsr(lists).View(), part).value(), 3.0 / 4.0 / 3.0);
}

TEST(ShufflePages, NodeCountNotAMultipleOfThePageSize) {
  const Lists lists = RandomGraph(1003, 10, 8);
  PageShuffleReport report;
  const PagePartition part = ShuffleChecked(lists, Options(7), &report);
  EXPECT_EQ(part.num_pages(), 144u);  // ceil(1003 / 7)
  // 144 * 7 - 1003 = 5 spare slots: at most 5 short pages, all numbered last.
  std::uint64_t short_pages = 0;
  bool seen_short = false;
  for (std::uint64_t p = 0; p < part.num_pages(); ++p) {
    const bool is_short = part.Page(p).back() == kEmptySlot;
    EXPECT_FALSE(seen_short && !is_short) << "full page " << p << " after a short one";
    seen_short = seen_short || is_short;
    short_pages += is_short;
  }
  EXPECT_GE(short_pages, 1u);
  EXPECT_LE(short_pages, 5u);
  EXPECT_EQ(report.short_pages, short_pages);
}

TEST(ShufflePages, OneRecordPerPageIsTheIdentity) {
  const Lists lists = RandomGraph(50, 6, 2);
  const PagePartition part = ShuffleChecked(lists, Options(1));
  const PagePartition identity = IdentityPartition(50, 1).value();
  EXPECT_EQ(part.members, identity.members);
  EXPECT_EQ(part.page_of, identity.page_of);
  EXPECT_EQ(OverlapRatio(ToCsr(lists).View(), part).value(), 0.0);
}

TEST(ShufflePages, IsolatedNodesAndEmptyGraph) {
  const Lists none(23);  // no edges at all
  PageShuffleReport report;
  const PagePartition part = ShuffleChecked(none, Options(5), &report);
  EXPECT_EQ(part.num_pages(), 5u);
  EXPECT_EQ(report.final_overlap_ratio, 0.0);
  EXPECT_EQ(report.edges, 0u);

  // A dense clique of 5 among 40 isolated nodes ends up on one page.
  Lists mixed(45);
  const NodeId clique[] = {3, 11, 20, 33, 44};
  for (NodeId u : clique) {
    for (NodeId v : clique) {
      if (u != v) mixed[u].push_back(v);
    }
  }
  const PagePartition mp = ShuffleChecked(mixed, Options(5));
  for (NodeId u : clique) EXPECT_EQ(mp.page_of[u], mp.page_of[clique[0]]);
  EXPECT_DOUBLE_EQ(OverlapRatio(ToCsr(mixed).View(), mp).value(), 5.0 / 45.0);

  const Csr empty = ToCsr({});
  const PagePartition e = ShufflePages(empty.View(), Options(5)).value();
  EXPECT_EQ(e.num_pages(), 0u);
  EXPECT_TRUE(ValidatePartition(e, 0).ok());
}

TEST(ShufflePages, RejectsMalformedGraphs) {
  const Csr out_of_range = ToCsr({{1}, {2}, {3}});  // id 3 >= n
  EXPECT_EQ(ShufflePages(out_of_range.View(), Options(2)).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(ShufflePages(ToFlat({{1}, {2}, {3}}), Options(2)).ok());

  Csr bad = ToCsr({{1}, {0}, {0}});
  bad.offsets[2] = 0;  // decreasing offsets
  EXPECT_FALSE(bad.View().Validate().ok());
  EXPECT_FALSE(ShufflePages(bad.View(), Options(2)).ok());
  bad = ToCsr({{1}, {0}});
  bad.offsets.back() = 1;  // last offset != ids.size()
  EXPECT_FALSE(bad.View().Validate().ok());
  EXPECT_FALSE(CsrGraphView{}.Validate().ok());
  EXPECT_TRUE(ToCsr({{1}, {0}}).View().Validate().ok());
}

TEST(ShufflePages, ReportsPhasesThroughTheCallback) {
  const Lists lists = RandomGraph(300, 8, 4);
  std::vector<std::string> names;
  const Csr csr = ToCsr(lists);
  auto r = ShufflePages(csr.View(), Options(4, 3), nullptr,
                        [&](const PageShufflePhase& ph) { names.push_back(ph.name); });
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(names, (std::vector<std::string>{"reverse", "fill", "ldg1", "ldg2", "ldg3", "swap1"}));
}

}  // namespace
}  // namespace strata::graph
