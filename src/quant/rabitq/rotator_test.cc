#include "quant/rabitq/rotator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "quant/rabitq/test_util.h"

namespace strata::quant::rabitq {
namespace {

using testing::Dot;
using testing::GaussianVector;

std::unique_ptr<Rotator> Make(RotatorKind kind, std::size_t dim, std::uint64_t seed = 7) {
  auto r = Rotator::Create(kind, dim, seed);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : nullptr;
}

struct Case {
  RotatorKind kind;
  std::size_t dim;
};

std::vector<Case> Cases() {
  return {{RotatorKind::kDense, 1},    {RotatorKind::kDense, 63},   {RotatorKind::kDense, 100},
          {RotatorKind::kDense, 256},  {RotatorKind::kFhtKac, 1},   {RotatorKind::kFhtKac, 64},
          {RotatorKind::kFhtKac, 100}, {RotatorKind::kFhtKac, 768}, {RotatorKind::kFhtKac, 1000},
          {RotatorKind::kFhtKac, 1536}};
}

TEST(Rotator, PaddedDimRoundsUpToMultipleOf64) {
  EXPECT_EQ(PaddedDim(1), 64u);
  EXPECT_EQ(PaddedDim(64), 64u);
  EXPECT_EQ(PaddedDim(65), 128u);
  EXPECT_EQ(PaddedDim(768), 768u);
  EXPECT_EQ(PaddedDim(1000), 1024u);
}

TEST(Rotator, PreservesNormsAndInnerProducts) {
  Xoshiro256 rng(1);
  for (const Case& c : Cases()) {
    auto rot = Make(c.kind, c.dim);
    ASSERT_NE(rot, nullptr);
    ASSERT_EQ(rot->padded_dim(), PaddedDim(c.dim));
    const std::size_t dp = rot->padded_dim();
    for (int trial = 0; trial < 5; ++trial) {
      const auto x = GaussianVector(rng, c.dim);
      const auto y = GaussianVector(rng, c.dim);
      std::vector<float> px(dp), py(dp);
      rot->Rotate(x.data(), px.data());
      rot->Rotate(y.data(), py.data());
      const double nx = Dot(x.data(), x.data(), c.dim);
      const double ny = Dot(y.data(), y.data(), c.dim);
      EXPECT_NEAR(Dot(px.data(), px.data(), dp), nx, 1e-5 * nx) << RotatorKindName(c.kind);
      EXPECT_NEAR(Dot(px.data(), py.data(), dp), Dot(x.data(), y.data(), c.dim),
                  1e-5 * std::sqrt(nx * ny))
          << RotatorKindName(c.kind) << " dim " << c.dim;
    }
  }
}

TEST(Rotator, MatrixIsOrthogonal) {
  // Build P column by column from basis vectors and check P^T P = I.
  for (RotatorKind kind : {RotatorKind::kDense, RotatorKind::kFhtKac}) {
    auto rot = Make(kind, 192);
    const std::size_t d = 192;
    std::vector<float> cols(d * d);
    std::vector<float> e(d, 0.0f);
    for (std::size_t j = 0; j < d; ++j) {
      e[j] = 1.0f;
      rot->Rotate(e.data(), cols.data() + j * d);
      e[j] = 0.0f;
    }
    double max_err = 0.0;
    for (std::size_t a = 0; a < d; ++a) {
      for (std::size_t b = a; b < d; ++b) {
        const double g = Dot(cols.data() + a * d, cols.data() + b * d, d);
        max_err = std::max(max_err, std::fabs(g - (a == b ? 1.0 : 0.0)));
      }
    }
    EXPECT_LT(max_err, 2e-6) << RotatorKindName(kind);
  }
}

TEST(Rotator, InverseRecoversInput) {
  Xoshiro256 rng(2);
  for (const Case& c : Cases()) {
    auto rot = Make(c.kind, c.dim);
    const auto x = GaussianVector(rng, c.dim);
    std::vector<float> px(rot->padded_dim()), back(c.dim);
    rot->Rotate(x.data(), px.data());
    rot->InverseRotate(px.data(), back.data());
    for (std::size_t i = 0; i < c.dim; ++i) EXPECT_NEAR(back[i], x[i], 1e-5);
  }
}

TEST(Rotator, BatchMatchesSingle) {
  Xoshiro256 rng(3);
  for (const Case& c : Cases()) {
    auto rot = Make(c.kind, c.dim);
    const std::size_t n = 5;
    const std::size_t dp = rot->padded_dim();
    const auto x = GaussianVector(rng, n * c.dim);
    std::vector<float> batch(n * dp), single(dp);
    rot->RotateBatch(x.data(), n, batch.data());
    for (std::size_t i = 0; i < n; ++i) {
      rot->Rotate(x.data() + i * c.dim, single.data());
      for (std::size_t j = 0; j < dp; ++j) EXPECT_NEAR(batch[i * dp + j], single[j], 1e-5);
    }
  }
}

TEST(Rotator, SpreadsSparseVectors) {
  // A basis vector must come out with no dominant coordinate, or the 1-bit
  // code of axis-aligned data would carry almost no information.
  for (RotatorKind kind : {RotatorKind::kDense, RotatorKind::kFhtKac}) {
    for (std::size_t dim : {128, 768}) {
      if (kind == RotatorKind::kDense && dim > 128) continue;  // keep the test fast
      auto rot = Make(kind, dim);
      std::vector<float> e(dim, 0.0f), pe(rot->padded_dim());
      e[dim / 3] = 1.0f;
      rot->Rotate(e.data(), pe.data());
      float max_abs = 0.0f;
      for (float v : pe) max_abs = std::max(max_abs, std::fabs(v));
      // A Gaussian-like spread has max |x| about sqrt(2 ln D') / sqrt(D').
      EXPECT_LT(max_abs, 4.5f / std::sqrt(static_cast<float>(dim))) << RotatorKindName(kind);
    }
  }
}

TEST(Rotator, DeterministicForSeed) {
  Xoshiro256 rng(4);
  for (RotatorKind kind : {RotatorKind::kDense, RotatorKind::kFhtKac}) {
    auto a = Make(kind, 100, 11);
    auto b = Make(kind, 100, 11);
    auto c = Make(kind, 100, 12);
    const auto x = GaussianVector(rng, 100);
    std::vector<float> pa(128), pb(128), pc(128);
    a->Rotate(x.data(), pa.data());
    b->Rotate(x.data(), pb.data());
    c->Rotate(x.data(), pc.data());
    EXPECT_EQ(pa, pb);
    EXPECT_NE(pa, pc);
  }
}

TEST(Rotator, SerializeRoundTripIsBitExact) {
  Xoshiro256 rng(5);
  for (RotatorKind kind : {RotatorKind::kDense, RotatorKind::kFhtKac}) {
    auto rot = Make(kind, 100, 99);
    std::vector<std::uint8_t> blob = {0xAB};  // Serialize appends
    rot->Serialize(&blob);
    ASSERT_EQ(blob.size(), 1 + rot->SerializedSize());
    auto back = Rotator::Deserialize(std::span<const std::uint8_t>(blob).subspan(1));
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ((*back)->kind(), kind);
    EXPECT_EQ((*back)->dim(), 100u);
    EXPECT_EQ((*back)->seed(), 99u);
    const auto x = GaussianVector(rng, 100);
    std::vector<float> p1(128), p2(128);
    rot->Rotate(x.data(), p1.data());
    (*back)->Rotate(x.data(), p2.data());
    EXPECT_EQ(p1, p2);
  }
}

TEST(Rotator, FhtBlobLayout) {
  EXPECT_EQ(FhtRounds(1024), 4);
  EXPECT_EQ(FhtRounds(768), 6);
  auto rot = Make(RotatorKind::kFhtKac, 768, 5);
  std::vector<std::uint8_t> blob;
  rot->Serialize(&blob);
  // 40-byte header + (8 + 6 rounds * 768/8 sign bytes) body + 8-byte checksum.
  ASSERT_EQ(blob.size(), 40u + 8u + 576u + 8u);
  EXPECT_EQ(blob[0], 'R');
  EXPECT_EQ(blob[1], 'B');
  EXPECT_EQ(blob[2], 'R');
  EXPECT_EQ(blob[3], 'T');
  EXPECT_EQ(blob[6], 1);  // kind fht
  EXPECT_EQ(blob[8], 0x00);
  EXPECT_EQ(blob[9], 0x03);   // dim 768 = 0x300, little-endian
  EXPECT_EQ(blob[32], 0x48);  // body size 584 = 0x248
  EXPECT_EQ(blob[33], 0x02);
  EXPECT_EQ(blob[40], 6);  // rounds
  EXPECT_EQ(blob[44], 0x00);
  EXPECT_EQ(blob[45], 0x02);  // block T = 512
  // A power-of-two D' has 4 rounds.
  std::vector<std::uint8_t> blob1024;
  Make(RotatorKind::kFhtKac, 1000, 5)->Serialize(&blob1024);
  EXPECT_EQ(blob1024.size(), 40u + 8u + 512u + 8u);
  EXPECT_EQ(blob1024[40], 4);
}

TEST(Rotator, DeserializeRejectsDamagedBlobs) {
  auto rot = Make(RotatorKind::kFhtKac, 100, 3);
  std::vector<std::uint8_t> blob;
  rot->Serialize(&blob);
  {
    auto bad = blob;
    bad[60] ^= 0x01;  // a sign bit
    EXPECT_TRUE(Rotator::Deserialize(bad).status().IsCorruption());
  }
  {
    auto bad = blob;
    bad.pop_back();
    EXPECT_TRUE(Rotator::Deserialize(bad).status().IsCorruption());
  }
  {
    auto bad = blob;
    bad.push_back(0);
    EXPECT_TRUE(Rotator::Deserialize(bad).status().IsCorruption());
  }
  {
    auto bad = blob;
    bad[0] = 'X';
    EXPECT_TRUE(Rotator::Deserialize(bad).status().IsCorruption());
  }
  {
    auto bad = blob;
    bad[4] = 9;  // version
    EXPECT_TRUE(Rotator::Deserialize(bad).status().IsNotSupported());
  }
  {
    auto bad = blob;
    bad[32] = 0xFF;  // body size far beyond the blob
    bad[39] = 0xFF;
    EXPECT_TRUE(Rotator::Deserialize(bad).status().IsCorruption());
  }
  EXPECT_TRUE(Rotator::Deserialize({}).status().IsCorruption());
}

TEST(Rotator, RejectsBadArguments) {
  EXPECT_TRUE(Rotator::Create(RotatorKind::kFhtKac, 0, 1).status().IsInvalidArgument());
  EXPECT_TRUE(
      Rotator::Create(RotatorKind::kFhtKac, kMaxRotatorDim + 1, 1).status().IsInvalidArgument());
  EXPECT_TRUE(Rotator::Create(RotatorKind::kDense, 5000, 1).status().IsInvalidArgument());
  EXPECT_TRUE(Rotator::Create(static_cast<RotatorKind>(7), 10, 1).status().IsInvalidArgument());
  EXPECT_TRUE(ParseRotatorKind("hadamard").status().IsInvalidArgument());
  EXPECT_EQ(*ParseRotatorKind("fht"), RotatorKind::kFhtKac);
  EXPECT_EQ(*ParseRotatorKind("dense"), RotatorKind::kDense);
}

}  // namespace
}  // namespace strata::quant::rabitq
