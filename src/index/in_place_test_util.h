// Test data for the in-place graph's tests: a small index built from the
// first half of a synthetic set (the rest to insert), its decoupled layout,
// and exact ground truth over a live set.
#ifndef STRATA_INDEX_IN_PLACE_TEST_UTIL_H_
#define STRATA_INDEX_IN_PLACE_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/in_place_graph.h"
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
// decoupled layout (with `vectors_in_pages`, the packed baseline's); gtest
// assertions on failure.
void Build(const ScratchDir& dir, Metric metric, bool shuffle, Fixture* f,
           bool vectors_in_pages = false);

// Exact top 10 of every query over base rows [0, rows) not `deleted`.
GroundTruth LiveGroundTruth(const Fixture& f, Metric metric, std::uint64_t rows,
                            const std::vector<bool>& deleted);

// What an owner journals: each vertex's last list place and the codes of
// the appended vertices, in order (inserts, repairs and compactions).
struct Journal {
  std::map<std::uint32_t, InPlaceListMove> moves;
  std::vector<std::uint8_t> codes;
  std::uint32_t appended = 0;
  void Record(const PreparedInPlaceInsert& p);
  InPlaceRecovery Recovery() const;
};

// Recall@10 at L 64 of the fixture's queries (l2) against the live set of
// rows [0, rows) not `deleted`; a gtest failure for a hit that is not live.
double LiveRecall(const InPlaceGraph& g, const Fixture& f, std::uint64_t rows,
                  const std::vector<bool>& deleted);
// The same with no row deleted.
double LiveRecall(const InPlaceGraph& g, const Fixture& f, std::uint64_t rows);

}  // namespace strata::testutil

#endif  // STRATA_INDEX_IN_PLACE_TEST_UTIL_H_
