// Synthetic generator: determinism (threads, ranges, files), the documented
// model properties and the integer affine map.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dataset/test_util.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using dataset_test::ScopedTempDir;

SyntheticOptions Small(ElementType type = ElementType::kFloat32) {
  SyntheticOptions o;
  o.num_base = 3000;
  o.dim = 24;
  o.num_queries = 50;
  o.seed = 11;
  o.element_type = type;
  return o;
}

std::vector<std::byte> Bytes(const VectorMatrix& m) {
  return std::vector<std::byte>(m.bytes(), m.bytes() + m.size_bytes());
}

TEST(Synthetic, IdenticalAcrossThreadCounts) {
  for (ElementType type : {ElementType::kFloat32, ElementType::kUint8, ElementType::kFloat16}) {
    SyntheticOptions o = Small(type);
    o.threads = 1;
    SyntheticData one;
    ASSERT_TRUE(GenerateSynthetic(o, &one).ok());
    for (unsigned t : {2u, 3u, 8u}) {
      o.threads = t;
      SyntheticData many;
      ASSERT_TRUE(GenerateSynthetic(o, &many).ok());
      EXPECT_EQ(Bytes(one.base), Bytes(many.base)) << "threads " << t;
      EXPECT_EQ(Bytes(one.queries), Bytes(many.queries)) << "threads " << t;
    }
  }
}

TEST(Synthetic, RowRangesMatchTheWholeSet) {
  const SyntheticOptions o = Small();
  SyntheticData all;
  ASSERT_TRUE(GenerateSynthetic(o, &all).ok());
  auto gen = SyntheticGenerator::Create(o);
  ASSERT_TRUE(gen.ok());
  std::vector<float> part(77 * o.dim);
  ASSERT_TRUE(gen->BaseRowsFloat(1234, 77, part).ok());
  const auto base = all.base.values<float>();
  EXPECT_TRUE(std::equal(part.begin(), part.end(), base.begin() + 1234 * o.dim));
  ASSERT_TRUE(gen->QueryRowsFloat(10, 40, part).ok());
  const auto q = all.queries.values<float>();
  EXPECT_TRUE(std::equal(part.begin(), part.begin() + 40 * o.dim, q.begin() + 10 * o.dim));
  EXPECT_TRUE(gen->BaseRowsFloat(2990, 11, part).IsOutOfRange());
  EXPECT_TRUE(gen->QueryRowsFloat(0, 51, part).IsOutOfRange());
  EXPECT_TRUE(gen->BaseRowsFloat(0, 78, part).IsInvalidArgument());  // buffer too small
}

TEST(Synthetic, SeedsAndStreamsDiffer) {
  SyntheticOptions o = Small();
  SyntheticData a, b;
  ASSERT_TRUE(GenerateSynthetic(o, &a).ok());
  o.seed = 12;
  ASSERT_TRUE(GenerateSynthetic(o, &b).ok());
  EXPECT_NE(Bytes(a.base), Bytes(b.base));
  EXPECT_NE(Bytes(a.queries), Bytes(b.queries));
  // Queries come from another stream than the base rows.
  const auto base = a.base.values<float>();
  const auto q = a.queries.values<float>();
  EXPECT_FALSE(std::equal(q.begin(), q.begin() + o.dim, base.begin()));
  // Same seed, same data (deterministic run to run).
  o.seed = 11;
  SyntheticData c;
  ASSERT_TRUE(GenerateSynthetic(o, &c).ok());
  EXPECT_EQ(Bytes(a.base), Bytes(c.base));
}

TEST(Synthetic, ClusterCountAndMetricNormalisation) {
  SyntheticOptions o = Small();
  EXPECT_EQ(SyntheticGenerator::Create(o)->num_clusters(), 16u);  // max(16, 3000 / 500)
  o.num_base = 20000;
  EXPECT_EQ(SyntheticGenerator::Create(o)->num_clusters(), 40u);
  o.clusters = 5;
  EXPECT_EQ(SyntheticGenerator::Create(o)->num_clusters(), 5u);

  o = Small();
  o.metric = Metric::kCosine;
  SyntheticData cos;
  ASSERT_TRUE(GenerateSynthetic(o, &cos).ok());
  for (const VectorMatrix* m : {&cos.base, &cos.queries}) {
    for (std::uint64_t i = 0; i < m->rows(); ++i) {
      double sq = 0;
      for (float v : m->row<float>(i)) sq += static_cast<double>(v) * v;
      ASSERT_NEAR(std::sqrt(sq), 1.0, 1e-5) << i;
    }
  }
  o.metric = Metric::kInnerProduct;
  SyntheticData ip;
  ASSERT_TRUE(GenerateSynthetic(o, &ip).ok());
  std::size_t unit = 0;
  for (std::uint64_t i = 0; i < ip.base.rows(); ++i) {
    double sq = 0;
    for (float v : ip.base.row<float>(i)) sq += static_cast<double>(v) * v;
    unit += std::fabs(std::sqrt(sq) - 1.0) < 1e-3;
  }
  EXPECT_LT(unit, 5u);  // left unnormalised
}

// Without noise every row is z A: it lies in the latent_dim-dimensional row
// space of A. Gram-Schmidt on the first rows, then the rest must have no
// component outside that span.
TEST(Synthetic, RowsLieInTheLatentSubspaceWithoutNoise) {
  SyntheticOptions o = Small();
  o.latent_dim = 4;
  o.dim = 16;
  o.noise = 0.0f;
  SyntheticData data;
  ASSERT_TRUE(GenerateSynthetic(o, &data).ok());
  std::vector<std::vector<double>> basis;
  double worst = 0;
  for (std::uint64_t i = 0; i < 200; ++i) {
    const auto row = data.base.row<float>(i);
    std::vector<double> r(row.begin(), row.end());
    double norm0 = 0;
    for (double v : r) norm0 += v * v;
    for (const auto& b : basis) {
      double dot = 0;
      for (std::size_t j = 0; j < r.size(); ++j) dot += r[j] * b[j];
      for (std::size_t j = 0; j < r.size(); ++j) r[j] -= dot * b[j];
    }
    double res = 0;
    for (double v : r) res += v * v;
    if (basis.size() < 4) {
      ASSERT_GT(res, 1e-3 * norm0);  // independent so far
      for (double& v : r) v /= std::sqrt(res);
      basis.push_back(r);
    } else {
      worst = std::max(worst, std::sqrt(res / norm0));
    }
  }
  EXPECT_LT(worst, 1e-5);
  // With the default noise, rows leave the subspace.
  o.noise = 0.15f;
  ASSERT_TRUE(GenerateSynthetic(o, &data).ok());
  EXPECT_NE(data.base.row<float>(0)[0], 0.0f);
}

TEST(Synthetic, IntegerTypesFollowTheDocumentedAffineMap) {
  SyntheticOptions o = Small();
  SyntheticData f;
  ASSERT_TRUE(GenerateSynthetic(o, &f).ok());
  EXPECT_EQ(f.quantization_scale, 0.0f);
  const auto fv = f.base.values<float>();

  o.element_type = ElementType::kUint8;
  SyntheticData u;
  ASSERT_TRUE(GenerateSynthetic(o, &u).ok());
  const float scale = u.quantization_scale;
  ASSERT_GT(scale, 0.0f);
  const auto uv = u.base.values<std::uint8_t>();
  for (std::size_t i = 0; i < fv.size(); ++i) {
    const float q = std::clamp(std::nearbyint(fv[i] * scale) + 128.0f, 0.0f, 255.0f);
    ASSERT_EQ(uv[i], static_cast<std::uint8_t>(q)) << i;
  }
  o.element_type = ElementType::kInt8;
  SyntheticData s;
  ASSERT_TRUE(GenerateSynthetic(o, &s).ok());
  EXPECT_EQ(s.quantization_scale, scale);
  const auto sv = s.base.values<std::int8_t>();
  for (std::size_t i = 0; i < fv.size(); ++i) {
    const float q = std::clamp(std::nearbyint(fv[i] * scale), -127.0f, 127.0f);
    ASSERT_EQ(sv[i], static_cast<std::int8_t>(q)) << i;
  }
  // scale = 127 / (4 rms) with the model's rms; the sample's rms agrees.
  double sq = 0;
  for (float v : fv) sq += static_cast<double>(v) * v;
  const double sample_rms = std::sqrt(sq / fv.size());
  EXPECT_NEAR(127.0 / (4.0 * scale), sample_rms, 0.05 * sample_rms);
  // Under cosine the map uses rms = 1 / sqrt(dim).
  o.metric = Metric::kCosine;
  EXPECT_FLOAT_EQ(SyntheticGenerator::Create(o)->quantization_scale(),
                  static_cast<float>(127.0 / (4.0 / std::sqrt(24.0))));
}

TEST(Synthetic, WriteSyntheticMatchesInMemory) {
  ScopedTempDir dir;
  SyntheticOptions o = Small(ElementType::kUint8);
  DatasetWriteOptions wo;
  wo.sync = false;
  ASSERT_TRUE(WriteSynthetic(o, dir.File("b.u8bin"), dir.File("q.npy"), wo).ok());
  SyntheticData mem;
  ASSERT_TRUE(GenerateSynthetic(o, &mem).ok());
  auto b = DatasetReader::Open(dir.File("b.u8bin"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(Bytes(*(*b)->ReadAll()), Bytes(mem.base));
  auto q = DatasetReader::Open(dir.File("q.npy"));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ((*q)->element_type(), ElementType::kUint8);
  EXPECT_EQ(Bytes(*(*q)->ReadAll()), Bytes(mem.queries));
  // Extension / element type mismatch, and skipping queries.
  Status s = WriteSynthetic(o, dir.File("x.fbin"), "", wo);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  o.element_type = ElementType::kFloat32;
  ASSERT_TRUE(WriteSynthetic(o, dir.File("x.fbin"), "", wo).ok());
  EXPECT_EQ(dir.List(), (std::vector<std::string>{"b.u8bin", "q.npy", "x.fbin"}));
}

TEST(Synthetic, ValidateRejectsBadOptions) {
  auto bad = [](auto mutate) {
    SyntheticOptions o = Small();
    mutate(o);
    SyntheticData d;
    return GenerateSynthetic(o, &d).IsInvalidArgument();
  };
  EXPECT_TRUE(bad([](SyntheticOptions& o) { o.num_base = 0; }));
  EXPECT_TRUE(bad([](SyntheticOptions& o) { o.dim = 0; }));
  EXPECT_TRUE(bad([](SyntheticOptions& o) { o.dim = kMaxDatasetDimension + 1; }));
  EXPECT_TRUE(bad([](SyntheticOptions& o) { o.latent_dim = 0; }));
  EXPECT_TRUE(bad([](SyntheticOptions& o) { o.noise = -1.0f; }));
  EXPECT_TRUE(bad([](SyntheticOptions& o) { o.noise = std::nanf(""); }));
  EXPECT_TRUE(bad([](SyntheticOptions& o) { o.element_type = ElementType::kBFloat16; }));
  EXPECT_TRUE(Small().Validate().ok());
  SyntheticOptions no_queries = Small();
  no_queries.num_queries = 0;
  SyntheticData d;
  ASSERT_TRUE(GenerateSynthetic(no_queries, &d).ok());
  EXPECT_EQ(d.queries.rows(), 0u);
}

}  // namespace
}  // namespace strata
