// Test data for the in-place graph's tests: a small index built from the
// first half of a synthetic set (the rest to insert), its decoupled layout,
// and exact ground truth over a live set.
#ifndef STRATA_INDEX_IN_PLACE_TEST_UTIL_H_
#define STRATA_INDEX_IN_PLACE_TEST_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "synthetic_dataset.h"

namespace strata::testutil {

inline constexpr std::uint64_t kRows = 4000;  // the first half built, the rest inserted
inline constexpr std::uint64_t kBuilt = 2000;
inline constexpr std::uint32_t kDim = 24;
inline constexpr std::uint32_t kQueries = 60;

struct Fixture {
  TestDataset data;
  VectorMatrix base, queries;
  std::string index, layout;
};

// Builds the graph (R 24, L 48) over the first kBuilt rows and writes its
// decoupled layout; gtest assertions on failure.
void Build(const ScratchDir& dir, Metric metric, bool shuffle, Fixture* f);

// Exact top 10 of every query over base rows [0, rows) not `deleted`.
GroundTruth LiveGroundTruth(const Fixture& f, Metric metric, std::uint64_t rows,
                            const std::vector<bool>& deleted);

}  // namespace strata::testutil

#endif  // STRATA_INDEX_IN_PLACE_TEST_UTIL_H_
