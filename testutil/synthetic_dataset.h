// Integration-test data: a synthetic clustered base and query file written
// into a scratch directory, with exact ground truth (k 10).
#ifndef STRATA_TESTUTIL_SYNTHETIC_DATASET_H_
#define STRATA_TESTUTIL_SYNTHETIC_DATASET_H_

#include <cstdint>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "scratch_dir.h"
#include "strata/dataset.h"
#include "strata/eval.h"

namespace strata::testutil {

struct TestDataset {
  std::string base, queries;
  GroundTruth gt;  // exact, k 10
};

// Writes `n` x `dim` base vectors and `num_queries` queries of `type` under
// `metric` (seeded) into `dir`; records a test failure if anything fails.
inline TestDataset MakeTestDataset(const ScratchDir& dir, Metric metric, ElementType type,
                                   std::uint64_t n, std::uint32_t dim, std::uint32_t num_queries,
                                   std::uint64_t seed) {
  TestDataset d;
  SyntheticOptions opt;
  opt.num_base = n;
  opt.dim = dim;
  opt.num_queries = num_queries;
  opt.metric = metric;
  opt.element_type = type;
  opt.seed = seed;
  const std::string ext = type == ElementType::kUint8  ? ".u8bin"
                          : type == ElementType::kInt8 ? ".i8bin"
                                                       : ".fbin";
  d.base = dir.File("base" + ext);
  d.queries = dir.File("query" + ext);
  DatasetWriteOptions write;
  write.sync = false;
  EXPECT_TRUE(WriteSynthetic(opt, d.base, d.queries, write).ok());
  ExactKnnOptions gt_opt;
  gt_opt.k = 10;
  gt_opt.metric = metric;
  auto gt = ComputeGroundTruth(d.base, d.queries, gt_opt);
  EXPECT_TRUE(gt.ok()) << gt.status().ToString();
  if (gt.ok()) d.gt = std::move(*gt);
  return d;
}

}  // namespace strata::testutil

#endif  // STRATA_TESTUTIL_SYNTHETIC_DATASET_H_
