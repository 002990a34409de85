#include "collection/pending_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>
#include <thread>
#include <unordered_set>

#include "sanitizers.h"

namespace strata::collection {
namespace {

// Sanitizer builds run smaller graphs and skip the timing test.
constexpr bool kSanitized = testutil::kUnderSanitizer;

constexpr VectorId kIdBase = 1000;  // entry at position i has id kIdBase + i

// n points of `dim` floats around `clusters` Gaussian centres.
std::vector<float> Clustered(std::size_t n, std::uint32_t dim, std::uint32_t clusters,
                             std::uint32_t seed, float spread = 2.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> centres(static_cast<std::size_t>(clusters) * dim);
  for (float& x : centres) x = nd(rng);
  std::uniform_int_distribution<std::uint32_t> pick(0, clusters - 1);
  std::vector<float> out(n * dim);
  for (std::size_t i = 0; i < n; ++i) {
    const float* c = centres.data() + static_cast<std::size_t>(pick(rng)) * dim;
    for (std::uint32_t d = 0; d < dim; ++d) out[i * dim + d] = c[d] + spread * nd(rng);
  }
  return out;
}

std::unique_ptr<PendingSet> FilledSet(const std::vector<float>& data, std::uint32_t dim,
                                      Metric metric) {
  auto set = PendingSet::Create(dim, metric);
  EXPECT_TRUE(set.ok());
  const std::size_t n = data.size() / dim;
  for (std::size_t i = 0; i < n; ++i) {
    auto pos = (*set)->Append(kIdBase + i, data.data() + i * dim, /*seq=*/i + 1);
    EXPECT_TRUE(pos.ok());
  }
  return std::move(*set);
}

std::unique_ptr<PendingGraph> MakeGraph(const PendingSet* set, Metric metric,
                                        PendingGraph::Options o = {}) {
  auto g = PendingGraph::Create(set, metric, o);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return std::move(*g);
}

using Results = std::vector<std::pair<float, VectorId>>;

double Recall(const Results& got, const Results& want) {
  if (want.empty()) return 1.0;
  std::unordered_set<VectorId> w;
  for (const auto& r : want) w.insert(r.second);
  std::size_t hit = 0;
  for (const auto& r : got) hit += w.count(r.second);
  return static_cast<double>(hit) / static_cast<double>(want.size());
}

// Mean recall@k of the graph against the set's exact scan, over `queries`.
double MeanRecall(const PendingGraph& g, const PendingSet& set, const std::vector<float>& queries,
                  std::uint32_t dim, std::uint64_t snapshot, std::size_t k, std::uint32_t L) {
  const std::size_t nq = queries.size() / dim;
  double sum = 0.0;
  Results got, want;
  for (std::size_t q = 0; q < nq; ++q) {
    g.Search(queries.data() + q * dim, snapshot, k, L, &got);
    set.Scan(queries.data() + q * dim, snapshot, k, &want);
    sum += Recall(got, want);
  }
  return sum / static_cast<double>(nq);
}

void ExpectVisible(const PendingSet& set, const Results& got, std::uint64_t snapshot,
                   std::uint32_t bound) {
  for (std::size_t r = 0; r < got.size(); ++r) {
    ASSERT_GE(got[r].second, kIdBase);
    const auto pos = static_cast<std::uint32_t>(got[r].second - kIdBase);
    ASSERT_LT(pos, bound) << "result outside the searched prefix";
    EXPECT_LE(set.insert_seq(pos), snapshot) << "entry " << pos << " not yet visible";
    EXPECT_GT(set.dead_seq(pos), snapshot) << "entry " << pos << " dead at the snapshot";
    if (r > 0) {
      EXPECT_LE(got[r - 1].first, got[r].first);
    }
  }
}

TEST(PendingGraph, RejectsBadArguments) {
  auto set = PendingSet::Create(4, Metric::kL2);
  ASSERT_TRUE(set.ok());
  EXPECT_FALSE(PendingGraph::Create(nullptr, Metric::kL2, {}).ok());
  EXPECT_FALSE(PendingGraph::Create(set->get(), Metric::kL2, {.R = 0}).ok());
  EXPECT_FALSE(PendingGraph::Create(set->get(), Metric::kL2, {.alpha = 0.5f}).ok());
  EXPECT_FALSE(PendingGraph::Create(set->get(), static_cast<Metric>(77), {}).ok());
  auto g = MakeGraph(set->get(), Metric::kL2);
  Results out{{1.0f, 1}};
  const float q[4] = {0, 0, 0, 0};
  EXPECT_EQ(g->Search(q, 100, 10, 64, &out), 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(g->CatchUp(1).ok());  // past the set's size
  ASSERT_TRUE((*set)->Append(kIdBase, q, 1).ok());
  EXPECT_TRUE(g->CatchUp(1).ok());
  EXPECT_TRUE(g->CatchUp(0).ok());  // no-op
  EXPECT_EQ(g->indexed(), 1u);
  EXPECT_EQ(g->Search(q, 1, 10, 64, &out), 1u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].second, kIdBase);
}

TEST(PendingGraph, RecallAtL64) {
  constexpr std::uint32_t kDim = 32;
  // 20k; fewer under ThreadSanitizer (~20x slower), where the concurrent test
  // is the point.
  const std::size_t n = kSanitized ? 6000 : 20000;
  const auto data = Clustered(n, kDim, 64, 1);
  const auto queries = Clustered(kSanitized ? 50 : 200, kDim, 64, 1);  // same centres, fresh points
  auto set = FilledSet(data, kDim, Metric::kL2);
  auto g = MakeGraph(set.get(), Metric::kL2);
  for (std::uint32_t upto = 0; upto < n;) {
    upto = std::min<std::uint32_t>(n, upto + 1500);
    ASSERT_TRUE(g->CatchUp(upto).ok());
    EXPECT_EQ(g->indexed(), upto);
  }
  std::size_t degree_sum = 0;
  for (std::uint32_t p = 0; p < n; ++p) {
    const auto nb = g->Neighbors(p);
    ASSERT_LE(nb.size(), g->capacity_per_node());
    for (const std::uint32_t x : nb) {
      ASSERT_LT(x, n);
      ASSERT_NE(x, p);
    }
    degree_sum += nb.size();
  }
  const double recall = MeanRecall(*g, *set, queries, kDim, n, 10, 64);
  std::printf("[pending graph] %zu x 32-d l2: recall@10 %.4f at L 64, mean degree %.1f, %.1f MiB\n",
              n, recall, static_cast<double>(degree_sum) / n, g->memory_bytes() / 1048576.0);
  EXPECT_GE(recall, 0.95);
}

TEST(PendingGraph, InnerProductAndCosine) {
  constexpr std::uint32_t kDim = 16;
  const std::size_t n = kSanitized ? 2000 : 5000;
  for (const Metric metric : {Metric::kInnerProduct, Metric::kCosine}) {
    const auto data = Clustered(n, kDim, 32, 2);
    const auto queries = Clustered(50, kDim, 32, 2);
    auto set = FilledSet(data, kDim, metric);
    auto g = MakeGraph(set.get(), metric);
    ASSERT_TRUE(g->CatchUp(n).ok());
    const double recall = MeanRecall(*g, *set, queries, kDim, n, 10, 64);
    std::printf("[pending graph] %zu x 16-d %s: recall@10 %.4f at L 64\n", n,
                std::string(MetricName(metric)).c_str(), recall);
    // Inner product is not a metric; greedy search is weaker there.
    EXPECT_GE(recall, metric == Metric::kCosine ? 0.95 : 0.85);
  }
}

// What a caller does: the graph's results plus an exact scan of the entries
// it did not search, [bound, size()), merged to the k nearest.
Results SearchAll(const PendingGraph& g, const PendingSet& set, Metric metric, const float* query,
                  std::uint64_t snapshot, std::size_t k, std::uint32_t L) {
  Results got;
  const std::uint32_t bound = g.Search(query, snapshot, k, L, &got);
  ExpectVisible(set, got, snapshot, bound);
  const kernels::ErasedDistanceFn fn = kernels::GetDistanceFn(metric, ElementType::kFloat32);
  const std::uint32_t n = set.size();
  for (std::uint32_t pos = bound; pos < n; ++pos) {
    if (set.insert_seq(pos) > snapshot || set.dead_seq(pos) <= snapshot) continue;
    got.emplace_back(fn(query, set.vector(pos), set.dim()), set.id(pos));
  }
  std::sort(got.begin(), got.end());
  if (got.size() > k) got.resize(k);
  return got;
}

TEST(PendingGraph, SnapshotRules) {
  constexpr std::uint32_t kDim = 16;
  const std::uint32_t n = 6000;
  const auto data = Clustered(n, kDim, 16, 3);
  auto set = FilledSet(data, kDim, Metric::kL2);  // entry i inserted by write i + 1
  // Every 5th entry dies at write n + 1 + i.
  for (std::uint32_t i = 0; i < n; i += 5) set->MarkDead(i, n + 1 + i);
  auto g = MakeGraph(set.get(), Metric::kL2);
  ASSERT_TRUE(g->CatchUp(n).ok());

  const auto queries = Clustered(40, kDim, 16, 3);
  Results got, want;
  for (const std::uint64_t snap :
       {0ull, 1ull, 400ull, 2047ull, 2048ull, 3000ull, 6000ull, 9000ull, 20000ull}) {
    double recall = 0.0;
    for (std::size_t q = 0; q < 40; ++q) {
      const float* query = queries.data() + q * kDim;
      const std::uint32_t bound = g->Search(query, snap, 10, 64, &got);
      // The walk covers the visible prefix, or nothing when it is short.
      EXPECT_EQ(bound, snap < PendingGraph::kMinWalkPrefix ? 0 : std::min<std::uint64_t>(snap, n));
      ExpectVisible(*set, got, snap, bound);
      set->Scan(query, snap, 10, &want);
      recall += Recall(SearchAll(*g, *set, Metric::kL2, query, snap, 10, 64), want);
    }
    recall /= 40;
    std::printf("[pending graph] snapshot %llu: recall@10 %.3f\n",
                static_cast<unsigned long long>(snap), recall);
    EXPECT_GE(recall, 0.95) << "snapshot " << snap;
  }
  // A query on a dying entry finds it exactly while it lives and never after.
  for (const std::uint32_t victim : {0u, 5u, 1235u, 2995u, 5995u}) {
    const float* v = data.data() + static_cast<std::size_t>(victim) * kDim;
    const std::uint64_t death = n + 1 + victim;
    for (const std::uint64_t snap : {std::uint64_t{victim} + 1, death - 1}) {
      got = SearchAll(*g, *set, Metric::kL2, v, snap, 1, 64);
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].second, kIdBase + victim) << "victim " << victim << " snapshot " << snap;
    }
    for (const std::uint64_t snap : {std::uint64_t{victim}, death, death + 100}) {
      got = SearchAll(*g, *set, Metric::kL2, v, snap, 10, 64);
      for (const auto& r : got) EXPECT_NE(r.second, kIdBase + victim) << "snapshot " << snap;
    }
  }
}

// One thread appends, kills and catches up in small steps while two search;
// every result must be visible at its snapshot and inside the searched
// prefix. Run under ThreadSanitizer in CI.
TEST(PendingGraph, ConcurrentCatchUpAndSearch) {
  constexpr std::uint32_t kDim = 16;
  const std::uint32_t n = kSanitized ? 3000 : 8000;
  const auto data = Clustered(n, kDim, 16, 4);
  const auto queries = Clustered(64, kDim, 16, 5);
  auto made = PendingSet::Create(kDim, Metric::kL2);
  ASSERT_TRUE(made.ok());
  PendingSet& set = **made;
  auto g = MakeGraph(&set, Metric::kL2, {.R = 24, .L = 48});
  std::atomic<std::uint64_t> visible{0};  // the newest write whose effects are in the set
  std::atomic<bool> done{false};

  std::thread writer([&] {
    std::uint64_t seq = 0;
    std::mt19937 rng(6);
    for (std::uint32_t i = 0; i < n; ++i) {
      const auto pos =
          set.Append(kIdBase + i, data.data() + static_cast<std::size_t>(i) * kDim, ++seq);
      ASSERT_TRUE(pos.ok());
      visible.store(seq, std::memory_order_release);
      if (i % 7 == 6) {  // kill a random earlier entry (a replace or delete)
        set.MarkDead(std::uniform_int_distribution<std::uint32_t>(0, i)(rng), ++seq);
        visible.store(seq, std::memory_order_release);
      }
      if (i % 16 == 15) {
        ASSERT_TRUE(g->CatchUp(set.size()).ok());
      }
    }
    ASSERT_TRUE(g->CatchUp(set.size()).ok());
    done.store(true, std::memory_order_release);
  });

  std::atomic<std::uint64_t> searches{0}, results{0};
  auto reader = [&](std::size_t first) {
    Results got;
    for (std::size_t q = first; !done.load(std::memory_order_acquire); q += 2) {
      const std::uint64_t snap = visible.load(std::memory_order_acquire);
      const float* query = queries.data() + (q % 64) * kDim;
      const std::uint32_t bound = g->Search(query, snap, 10, 32, &got);
      ASSERT_LE(bound, set.size());
      ExpectVisible(set, got, snap, bound);
      searches.fetch_add(1, std::memory_order_relaxed);
      results.fetch_add(got.size(), std::memory_order_relaxed);
    }
  };
  std::thread r1(reader, 0), r2(reader, 1);
  writer.join();
  r1.join();
  r2.join();
  EXPECT_EQ(g->indexed(), n);
  EXPECT_GT(searches.load(), 0u);
  const double recall = MeanRecall(*g, set, queries, kDim, visible.load(), 10, 64);
  std::printf(
      "[pending graph] concurrent: %llu searches (%llu results) during %u inserts, "
      "final recall@10 %.3f\n",
      static_cast<unsigned long long>(searches.load()),
      static_cast<unsigned long long>(results.load()), n, recall);
  EXPECT_GE(recall, 0.9);
}

// Insert rate and search time against the exact scan (printed, not asserted).
void MeasureSpeed(std::uint32_t n, std::uint32_t dim) {
  const auto data = Clustered(n, dim, 256, 7);
  const std::size_t nq = 200;
  const auto queries = Clustered(nq, dim, 256, 7);
  auto set = FilledSet(data, dim, Metric::kL2);
  auto g = MakeGraph(set.get(), Metric::kL2);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (std::uint32_t upto = 0; upto < n;) {
    upto = std::min<std::uint32_t>(n, upto + 4096);
    ASSERT_TRUE(g->CatchUp(upto).ok());
  }
  const double build_s = std::chrono::duration<double>(Clock::now() - t0).count();

  std::vector<Results> truth(nq);
  const auto t1 = Clock::now();
  for (std::size_t q = 0; q < nq; ++q) set->Scan(queries.data() + q * dim, n, 10, &truth[q]);
  const double scan_us = std::chrono::duration<double, std::micro>(Clock::now() - t1).count() / nq;
  std::printf(
      "[pending graph] %u x %u-d l2: insert %.0f vectors/s (%.2f s), %.1f MiB adjacency; "
      "exact scan %.1f us/query\n",
      n, dim, n / build_s, build_s, g->memory_bytes() / 1048576.0, scan_us);
  Results got;
  for (const std::uint32_t L : {16u, 32u, 64u, 100u}) {
    double recall = 0.0;
    const auto t2 = Clock::now();
    for (std::size_t q = 0; q < nq; ++q) {
      g->Search(queries.data() + q * dim, n, 10, L, &got);
      recall += Recall(got, truth[q]);
    }
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t2).count() / nq;
    std::printf("[pending graph]   L %3u: recall@10 %.4f, %.1f us/query (%.1fx faster than scan)\n",
                L, recall / nq, us, scan_us / us);
  }
}

TEST(PendingGraph, Speed20k128d) {
  if (kSanitized) GTEST_SKIP() << "timings under a sanitizer mean nothing";
  MeasureSpeed(20000, 128);
}

// Slow (about a minute): run with --gtest_also_run_disabled_tests.
TEST(PendingGraph, DISABLED_Speed100k128d) { MeasureSpeed(100000, 128); }

}  // namespace
}  // namespace strata::collection
