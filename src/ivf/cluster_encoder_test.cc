#include "ivf/cluster_encoder.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ivf/ivf_test_util.h"

namespace strata::ivf {
namespace {

using quant::rabitq::BatchEstimates;
using quant::rabitq::kBatchSize;
using quant::rabitq::RabitqQuantizer;
using quant::rabitq::RabitqQuery;

TEST(EncodeClusters, RefinedEstimatesMatchTrueDistancesInStorageOrder) {
  const std::size_t n = 3000, d = 64;
  auto rows = testing::ClusteredRows(n, d, 12, 8);
  IvfClusteringOptions copt;
  copt.clusters = 6;
  copt.threads = 2;
  auto cl = ClusterVectors(rows.data(), n, d, copt);
  ASSERT_TRUE(cl.ok());
  auto qz = RabitqQuantizer::Create({.dim = d, .metric = Metric::kL2, .total_bits = 7});
  ASSERT_TRUE(qz.ok());
  auto enc = EncodeClusters(*qz, rows.data(), *cl, RerankKind::kExCode, 2);
  ASSERT_TRUE(enc.ok()) << enc.status().ToString();
  const std::size_t rec = RecordBytes(*qz, RerankKind::kExCode);
  ASSERT_EQ(enc->records.size(), n * rec);
  const float* query = rows.data() + 17 * d;
  RabitqQuery q;
  ASSERT_TRUE(qz->PrepareQuery(query, &q).ok());
  double err = 0, scale = 0;
  std::size_t violations = 0;
  for (std::size_t c = 0; c < cl->num_clusters; ++c) {
    std::vector<float> rc(qz->padded_dim());
    qz->RotateCentroid(cl->centroids.data() + c * d, rc.data());
    const auto f = qz->ForCluster(q, rc.data());
    for (std::uint64_t i = 0; i < cl->size(c); ++i) {
      const std::uint8_t* block =
          enc->ram_blocks.data() +
          (enc->block_offsets[c] + i / kBatchSize) * qz->layout().ram_batch_bytes();
      BatchEstimates e;
      qz->EstimateBatch(q, f, block, &e);
      const std::uint64_t pos = cl->offsets[c] + i;
      const float truth =
          testing::L2(query, rows.data() + static_cast<std::size_t>(cl->order[pos]) * d, d);
      const float refined = qz->Refine(q, f, qz->ExactPrefixIp(q, block, i % kBatchSize),
                                       enc->records.data() + pos * rec);
      err += (refined - truth) * (refined - truth);
      scale += truth * truth;
      violations += e.lower[i % kBatchSize] > truth;
    }
  }
  EXPECT_LT(std::sqrt(err / scale), 0.02);  // 7-bit codes: ~1 % relative error
  EXPECT_LT(violations, n / 20);            // lower bounds hold for > 95 %
  auto raw = EncodeClusters(*qz, rows.data(), *cl, RerankKind::kRaw, 1);
  ASSERT_TRUE(raw.ok());
  EXPECT_TRUE(raw->records.empty());
  EXPECT_EQ(raw->ram_blocks, enc->ram_blocks);  // same RAM part, independent of threads
  EXPECT_EQ(RecordBytes(*qz, RerankKind::kRaw), d * 4);
}

TEST(EncodeClusters, RejectsNonFiniteRows) {
  const std::size_t n = 200, d = 8;
  auto rows = testing::ClusteredRows(n, d, 2, 9);
  IvfClusteringOptions copt;
  copt.clusters = 2;
  auto cl = ClusterVectors(rows.data(), n, d, copt);
  ASSERT_TRUE(cl.ok());
  rows[5 * d] = std::nanf("");
  auto qz = RabitqQuantizer::Create({.dim = d, .total_bits = 3});
  ASSERT_TRUE(qz.ok());
  EXPECT_EQ(EncodeClusters(*qz, rows.data(), *cl, RerankKind::kExCode, 1).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace strata::ivf
