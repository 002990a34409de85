#include "eval/exact_knn.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "kernels/distance.h"
#include "strata/dataset.h"
#include "strata/eval.h"

namespace strata {
namespace {

// Independent reference: double-precision distances, full sort by (dist, id).
std::vector<std::pair<double, VectorId>> BruteForce(Metric metric, const std::vector<double>& base,
                                                    const std::vector<double>& q,
                                                    std::size_t dim) {
  const std::size_t nb = base.size() / dim;
  std::vector<std::pair<double, VectorId>> out(nb);
  double qn = 0;
  for (double v : q) qn += v * v;
  for (std::size_t i = 0; i < nb; ++i) {
    double dot = 0, l2 = 0, xn = 0;
    for (std::size_t j = 0; j < dim; ++j) {
      const double x = base[i * dim + j];
      dot += x * q[j];
      l2 += (x - q[j]) * (x - q[j]);
      xn += x * x;
    }
    double d = metric == Metric::kL2            ? l2
               : metric == Metric::kInnerProduct ? -dot
               : (qn == 0 || xn == 0)            ? 1.0
                                                 : 1.0 - dot / std::sqrt(qn * xn);
    out[i] = {d, i};
  }
  std::sort(out.begin(), out.end());
  return out;
}

template <typename T>
std::vector<T> RandomRows(std::size_t n, std::size_t dim, std::mt19937_64& rng) {
  std::vector<T> v(n * dim);
  if constexpr (std::is_same_v<T, float>) {
    std::normal_distribution<float> g(0.0f, 1.0f);
    // Clustered: a few centres so that neighbours are close and near-ties occur.
    std::vector<float> centers(8 * dim);
    for (auto& c : centers) c = 3.0f * g(rng);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t c = rng() % 8;
      for (std::size_t j = 0; j < dim; ++j) v[i * dim + j] = centers[c * dim + j] + g(rng);
    }
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {
    for (auto& x : v) x = static_cast<std::uint8_t>(rng() % 256);
  } else {
    for (auto& x : v) x = static_cast<std::int8_t>(static_cast<int>(rng() % 256) - 128);
  }
  return v;
}

template <typename T>
void CheckAgainstBruteForce(Metric metric, ElementType type, std::size_t dim, std::size_t block,
                            std::size_t modulus = 0) {
  std::mt19937_64 rng(42 + dim);
  const std::size_t nb = 3000, nq = 40, k = 20;
  auto base = RandomRows<T>(nb, dim, rng);
  auto queries = RandomRows<T>(nq, dim, rng);
  ExactKnnOptions opt;
  opt.k = k;
  opt.metric = metric;
  opt.threads = 2;
  opt.query_block = 16;  // several query blocks
  // Filtered: query q accepts the rows whose id is q modulo `modulus`.
  auto accepted = [modulus](std::size_t q, VectorId id) {
    return modulus == 0 || id % modulus == q % modulus;
  };
  if (modulus != 0) opt.accept = accepted;
  ExactKnn knn(opt, type, queries.data(), nq, dim);
  for (std::size_t b = 0; b < nb; b += block) {
    const std::size_t n = std::min(block, nb - b);
    ASSERT_TRUE(knn.AddBase(base.data() + b * dim, n, b).ok());
  }
  GroundTruth gt = knn.Finish();
  ASSERT_EQ(gt.num_queries, nq);
  ASSERT_EQ(gt.k, k);
  std::vector<double> bd(base.begin(), base.end());
  for (std::size_t q = 0; q < nq; ++q) {
    std::vector<double> qd(queries.begin() + q * dim, queries.begin() + (q + 1) * dim);
    auto ref = BruteForce(metric, bd, qd, dim);
    std::erase_if(ref, [&](auto& p) { return !accepted(q, p.second); });
    for (std::size_t i = ref.size(); i < k; ++i) {  // fewer accepted rows than k
      ASSERT_EQ(gt.ids[q * k + i], kInvalidVectorId);
      ASSERT_TRUE(std::isinf(gt.distances[q * k + i]));
    }
    for (std::size_t i = 0; i < std::min(k, ref.size()); ++i) {
      const double tol = 1e-4 * std::max(1.0, std::fabs(ref[i].first));
      // Distances agree with the double reference at every rank...
      ASSERT_NEAR(gt.distances[q * k + i], ref[i].first, tol) << "q=" << q << " rank=" << i;
      // ...and each returned id really has the distance reported for it.
      const VectorId id = gt.ids[q * k + i];
      auto it = std::find_if(ref.begin(), ref.end(), [&](auto& p) { return p.second == id; });
      ASSERT_NE(it, ref.end());
      ASSERT_NEAR(it->first, ref[i].first, tol) << "q=" << q << " rank=" << i;
    }
  }
}

TEST(ExactKnn, FloatL2MatchesBruteForce) {
  CheckAgainstBruteForce<float>(Metric::kL2, ElementType::kFloat32, 37, 3000);
}
TEST(ExactKnn, FloatL2BlockedMatchesBruteForce) {
  CheckAgainstBruteForce<float>(Metric::kL2, ElementType::kFloat32, 128, 701);
}
TEST(ExactKnn, FloatInnerProductMatchesBruteForce) {
  CheckAgainstBruteForce<float>(Metric::kInnerProduct, ElementType::kFloat32, 64, 999);
}
TEST(ExactKnn, FloatCosineMatchesBruteForce) {
  CheckAgainstBruteForce<float>(Metric::kCosine, ElementType::kFloat32, 100, 1500);
}
TEST(ExactKnn, Uint8AllMetricsMatchBruteForce) {
  CheckAgainstBruteForce<std::uint8_t>(Metric::kL2, ElementType::kUint8, 96, 1000);
  CheckAgainstBruteForce<std::uint8_t>(Metric::kInnerProduct, ElementType::kUint8, 17, 3000);
  CheckAgainstBruteForce<std::uint8_t>(Metric::kCosine, ElementType::kUint8, 33, 512);
}
TEST(ExactKnn, Int8AllMetricsMatchBruteForce) {
  CheckAgainstBruteForce<std::int8_t>(Metric::kL2, ElementType::kInt8, 64, 3000);
  CheckAgainstBruteForce<std::int8_t>(Metric::kInnerProduct, ElementType::kInt8, 31, 777);
  CheckAgainstBruteForce<std::int8_t>(Metric::kCosine, ElementType::kInt8, 128, 3000);
}

TEST(ExactKnn, FilteredMatchesFilteredBruteForce) {
  // ~300, ~30 and 2-3 accepted rows per query (k = 20).
  for (std::size_t modulus : {10, 97, 1200}) {
    CheckAgainstBruteForce<float>(Metric::kL2, ElementType::kFloat32, 64, 701, modulus);
    CheckAgainstBruteForce<float>(Metric::kCosine, ElementType::kFloat32, 33, 3000, modulus);
    CheckAgainstBruteForce<std::uint8_t>(Metric::kL2, ElementType::kUint8, 48, 1000, modulus);
  }
}

TEST(ExactKnn, DuplicatesTieBreakBySmallerId) {
  const std::size_t dim = 4;
  std::vector<float> base = {1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 5, 5, 5, 5};
  std::vector<float> q = {1, 1, 1, 1};
  ExactKnnOptions opt;
  opt.k = 3;
  auto gt = ComputeGroundTruth(ElementType::kFloat32, base.data(), 5, q.data(), 1, dim, opt);
  ASSERT_TRUE(gt.ok());
  EXPECT_EQ(gt->ids, (std::vector<VectorId>{0, 2, 3}));
  EXPECT_EQ(gt->distances, (std::vector<float>{0, 0, 0}));
}

TEST(ExactKnn, RejectsKLargerThanBase) {
  std::vector<float> base(8, 1.0f), q(4, 1.0f);
  ExactKnnOptions opt;
  opt.k = 3;
  auto gt = ComputeGroundTruth(ElementType::kFloat32, base.data(), 2, q.data(), 1, 4, opt);
  ASSERT_FALSE(gt.ok());
  EXPECT_TRUE(gt.status().IsInvalidArgument());
  opt.k = 0;
  EXPECT_FALSE(opt.Validate().ok());
}

TEST(ExactKnn, FromFilesMatchesInMemoryAndChecksDims) {
  char tmpl[] = "/tmp/strata_eval_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  std::mt19937_64 rng(5);
  const std::size_t dim = 48, nb = 2500, nq = 30;
  auto base = RandomRows<float>(nb, dim, rng);
  auto queries = RandomRows<float>(nq, dim, rng);
  auto write = [&](const std::string& path, const std::vector<float>& rows, std::size_t d) {
    auto w = DatasetWriter::Create(path, ElementType::kFloat32, static_cast<std::uint32_t>(d),
                                   {.format = std::nullopt, .sync = false});
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Append(std::span<const float>(rows)).ok());
    ASSERT_TRUE((*w)->Finish().ok());
  };
  write(dir + "/b.fbin", base, dim);
  write(dir + "/q.fbin", queries, dim);
  ExactKnnOptions opt;
  opt.k = 10;
  opt.base_block_bytes = 1u << 20;  // ~5 blocks: exercises streaming
  auto from_files = ComputeGroundTruth(dir + "/b.fbin", dir + "/q.fbin", opt);
  ASSERT_TRUE(from_files.ok()) << from_files.status().ToString();
  auto in_mem =
      ComputeGroundTruth(ElementType::kFloat32, base.data(), nb, queries.data(), nq, dim, opt);
  ASSERT_TRUE(in_mem.ok());
  EXPECT_EQ(from_files->ids, in_mem->ids);

  std::vector<float> wrong(nq * 7, 0.5f);
  write(dir + "/q7.fbin", wrong, 7);
  auto bad = ComputeGroundTruth(dir + "/b.fbin", dir + "/q7.fbin", opt);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dimension"), std::string::npos);
  for (const char* f : {"/b.fbin", "/q.fbin", "/q7.fbin"}) std::remove((dir + f).c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace strata
