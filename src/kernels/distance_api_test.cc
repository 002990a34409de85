// The public distance API: metric semantics ("smaller is nearer"), argument
// validation, batch computation and row normalisation for cosine.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernels/distance.h"
#include "kernels/distance_test_util.h"
#include "strata/distance.h"

namespace strata {
namespace {

using kernels::testing::NaiveReference;
using kernels::testing::Op;
using kernels::testing::RandomVector;

const ElementType kTypes[] = {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16,
                              ElementType::kUint8, ElementType::kInt8};

TEST(DistanceApi, MetricsAreSmallerIsNearer) {
  std::mt19937_64 rng(10);
  for (ElementType type : kTypes) {
    for (std::size_t dim : {std::size_t{1}, std::size_t{13}, std::size_t{200}}) {
      const auto a = RandomVector(type, dim, rng);
      const auto b = RandomVector(type, dim, rng);
      const double l2 = NaiveReference(Op::kL2, type, type, a.data(), b.data(), dim).value;
      const double ip = NaiveReference(Op::kIp, type, type, a.data(), b.data(), dim).value;
      const double cs = NaiveReference(Op::kCos, type, type, a.data(), b.data(), dim).value;
      const double scale = kernels::testing::IsInteger(type) ? 1e-6 : 1e-4;

      auto d = MakeDistance(Metric::kL2, type, dim);
      ASSERT_TRUE(d.ok()) << d.status().ToString();
      EXPECT_NEAR((*d)(a.data(), b.data()), l2, scale * (1 + l2));
      d = MakeDistance(Metric::kInnerProduct, type, dim);
      ASSERT_TRUE(d.ok());
      EXPECT_NEAR((*d)(a.data(), b.data()), -ip, scale * (1 + std::fabs(ip)));
      d = MakeDistance(Metric::kCosine, type, dim);
      ASSERT_TRUE(d.ok());
      EXPECT_NEAR((*d)(a.data(), b.data()), 1.0 - cs, 1e-5);
      EXPECT_EQ(d->metric(), Metric::kCosine);
      EXPECT_EQ(d->element_type(), type);
      EXPECT_EQ(d->dim(), dim);
      EXPECT_EQ(d->vector_bytes(), dim * ElementSize(type));
      EXPECT_EQ(d->isa_name(), ActiveIsaName());

      auto one = ComputeDistance(Metric::kCosine, type, a.data(), b.data(), dim);
      ASSERT_TRUE(one.ok());
      EXPECT_EQ(*one, (*d)(a.data(), b.data()));
    }
  }
}

// Cosine stays cosine on unnormalised data: scaling a vector changes L2 and
// IP but not the cosine distance (the DiskANN cosine->L2 pitfall).
TEST(DistanceApi, CosineIsScaleInvariant) {
  const std::vector<float> a = {1, 2, 3, 4}, b = {2, 4, 6, 8}, c = {-4, 3, 0, 1};
  auto cosine = MakeDistance(Metric::kCosine, ElementType::kFloat32, 4);
  ASSERT_TRUE(cosine.ok());
  EXPECT_NEAR((*cosine)(a.data(), b.data()), 0.0f, 1e-7);
  const double expected = 1.0 - (-4 + 6 + 0 + 4) / (std::sqrt(30.0) * std::sqrt(26.0));
  EXPECT_NEAR((*cosine)(a.data(), c.data()), expected, 1e-7);
  EXPECT_NEAR((*cosine)(b.data(), c.data()), expected, 1e-7);
  const std::vector<std::uint8_t> u = {10, 20, 30}, v = {100, 200, 300 - 45};
  auto cos_u8 = MakeDistance(Metric::kCosine, ElementType::kUint8, 3);
  ASSERT_TRUE(cos_u8.ok());
  const double dot = 10.0 * 100 + 20.0 * 200 + 30.0 * 255;
  const double want = 1.0 - dot / std::sqrt((100.0 + 400 + 900) * (10000.0 + 40000 + 65025));
  EXPECT_FLOAT_EQ((*cos_u8)(u.data(), v.data()), static_cast<float>(want));
}

TEST(DistanceApi, ZeroVectorUnderCosineIsDistanceOne) {
  const std::vector<float> z(8, 0.0f), a = {1, 0, 0, 0, 0, 0, 0, 2};
  auto d = MakeDistance(Metric::kCosine, ElementType::kFloat32, 8);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)(z.data(), a.data()), 1.0f);
  EXPECT_EQ((*d)(z.data(), z.data()), 1.0f);
}

TEST(DistanceApi, RejectsBadArguments) {
  const float x[2] = {1, 2};
  EXPECT_TRUE(MakeDistance(Metric::kL2, ElementType::kFloat32, 0).status().IsInvalidArgument());
  EXPECT_TRUE(
      MakeDistance(static_cast<Metric>(7), ElementType::kFloat32, 4).status().IsInvalidArgument());
  EXPECT_TRUE(
      MakeDistance(Metric::kL2, static_cast<ElementType>(200), 4).status().IsInvalidArgument());
  EXPECT_TRUE(
      MakeDistance(Metric::kL2, ElementType::kFloat32, std::numeric_limits<std::size_t>::max() / 2)
          .status()
          .IsInvalidArgument());
  EXPECT_TRUE(ComputeDistance(Metric::kL2, ElementType::kFloat32, nullptr, x, 2)
                  .status()
                  .IsInvalidArgument());
  EXPECT_TRUE(
      ComputeDistance(Metric::kL2, ElementType::kFloat32, x, x, 0).status().IsInvalidArgument());
  DistanceComputer empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_TRUE(MakeDistance(Metric::kL2, ElementType::kFloat32, 2)->valid());
}

TEST(DistanceApi, ComputeManyMatchesSingleCalls) {
  std::mt19937_64 rng(11);
  for (ElementType type : kTypes) {
    const std::size_t dim = 37, n = 9;
    const auto q = RandomVector(type, dim, rng);
    const auto rows = RandomVector(type, dim * n, rng);
    for (Metric m : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
      auto d = MakeDistance(m, type, dim);
      ASSERT_TRUE(d.ok());
      std::vector<float> out(n + 1, -7.0f);
      d->ComputeMany(q.data(), rows.data(), n, out.data());
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(out[i], (*d)(q.data(), rows.data() + i * d->vector_bytes()));
      }
      EXPECT_EQ(out[n], -7.0f);
    }
  }
}

TEST(DistanceApi, ActiveIsaNameIsTheBestKernels) {
  EXPECT_EQ(ActiveIsaName(), kernels::IsaName(kernels::BestKernels().isa));
}

double Norm(const float* v, std::size_t dim) {
  double s = 0;
  for (std::size_t i = 0; i < dim; ++i) s += static_cast<double>(v[i]) * v[i];
  return std::sqrt(s);
}

TEST(NormalizeRows, UnitNormsAndZeroRowsCounted) {
  std::mt19937_64 rng(12);
  const std::size_t n = 6, dim = 19;
  auto bytes = RandomVector(ElementType::kFloat32, n * dim, rng);
  std::vector<float> rows(n * dim);
  std::memcpy(rows.data(), bytes.data(), bytes.size());
  for (std::size_t i = 0; i < dim; ++i) {
    rows[2 * dim + i] = 0.0f;                           // zero row
    rows[3 * dim + i] = (i % 3 == 0) ? 3e-30f : 0.0f;   // squares underflow float32
    rows[4 * dim + i] = (i % 2 == 0) ? 3e30f : -1e30f;  // squares overflow float32
  }
  const std::vector<float> before = rows;
  auto zero = NormalizeRows(rows.data(), n, dim);
  ASSERT_TRUE(zero.ok()) << zero.status().ToString();
  EXPECT_EQ(*zero, 1u);
  for (std::size_t r = 0; r < n; ++r) {
    if (r == 2) {
      for (std::size_t i = 0; i < dim; ++i) EXPECT_EQ(rows[r * dim + i], 0.0f);
      continue;
    }
    EXPECT_NEAR(Norm(rows.data() + r * dim, dim), 1.0, 1e-6) << r;
    // Direction unchanged: cosine distance to the original is ~0.
    auto cosine = MakeDistance(Metric::kCosine, ElementType::kFloat32, dim);
    if (r != 3 && r != 4) {  // originals of 3 and 4 are outside float32 norm range
      EXPECT_NEAR((*cosine)(rows.data() + r * dim, before.data() + r * dim), 0.0f, 1e-6) << r;
    }
  }
  // On unit vectors cosine distance equals 1 + (-<a, b>).
  auto cosine = MakeDistance(Metric::kCosine, ElementType::kFloat32, dim);
  auto ip = MakeDistance(Metric::kInnerProduct, ElementType::kFloat32, dim);
  EXPECT_NEAR((*cosine)(rows.data(), rows.data() + dim),
              1.0f + (*ip)(rows.data(), rows.data() + dim), 1e-6);
}

TEST(NormalizeRows, RejectsNonFiniteRowsAndBadArguments) {
  std::vector<float> rows = {3, 4, 1, std::numeric_limits<float>::quiet_NaN(), 6, 8};
  auto r = NormalizeRows(rows.data(), 3, 2);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find("row 1"), std::string::npos) << r.status().ToString();
  EXPECT_FLOAT_EQ(rows[0], 0.6f);  // earlier rows done
  EXPECT_EQ(rows[4], 6.0f);        // later rows untouched
  std::vector<float> inf_row = {std::numeric_limits<float>::infinity(), 1};
  EXPECT_FALSE(NormalizeRows(inf_row.data(), 1, 2).ok());
  EXPECT_TRUE(NormalizeRows(nullptr, 1, 2).status().IsInvalidArgument());
  EXPECT_TRUE(NormalizeRows(rows.data(), 1, 0).status().IsInvalidArgument());
  auto none = NormalizeRows(nullptr, 0, 4);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0u);
}

TEST(NormalizeInPlace, InternalHelper) {
  std::vector<float> v = {0, 3, 0, 4};
  EXPECT_FLOAT_EQ(kernels::SquaredNorm(v.data(), 4), 25.0f);
  EXPECT_TRUE(kernels::NormalizeInPlace(v.data(), 4));
  EXPECT_FLOAT_EQ(v[1], 0.6f);
  EXPECT_FLOAT_EQ(v[3], 0.8f);
  std::vector<float> z(5, 0.0f);
  EXPECT_FALSE(kernels::NormalizeInPlace(z.data(), 5));
  EXPECT_EQ(z[0], 0.0f);
  std::vector<float> bad = {1, std::numeric_limits<float>::infinity()};
  EXPECT_FALSE(kernels::NormalizeInPlace(bad.data(), 2));
  EXPECT_EQ(bad[0], 1.0f);
}

}  // namespace
}  // namespace strata
