#include "index/in_place_test_util.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "strata/graph_index.h"

namespace strata::testutil {

void Build(const ScratchDir& dir, Metric metric, bool shuffle, Fixture* f, bool vectors_in_pages) {
  f->data = MakeTestDataset(dir, metric, ElementType::kFloat32, kRows, kDim, kQueries, 5);
  auto base = ReadVectorsAsFloat(f->data.base);
  auto queries = ReadVectorsAsFloat(f->data.queries);
  ASSERT_TRUE(base.ok() && queries.ok());
  f->base = std::move(*base);
  f->queries = std::move(*queries);
  auto half = VectorMatrix::Allocate(ElementType::kFloat32, kBuilt, kDim);
  ASSERT_TRUE(half.ok());
  std::memcpy(half->bytes(), f->base.bytes(), half->size_bytes());
  const std::string half_path = dir.File("half.fbin");
  ASSERT_TRUE(WriteDataset(half_path, *half).ok());
  GraphBuildOptions b;
  b.metric = metric;
  b.R = 24;
  b.L = 48;
  b.threads = 2;
  b.page_shuffle = shuffle;
  b.mem_graph_ratio = shuffle ? 0.02 : 0.0;
  f->index = dir.File("idx");
  f->layout = dir.File("decoupled");
  auto report = BuildGraphIndex(half_path, f->index, b);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  std::filesystem::create_directories(f->layout);
  auto split = WriteDecoupledLayout(f->index, f->layout,
                                    {.threads = 2, .vectors_in_edge_pages = vectors_in_pages});
  ASSERT_TRUE(split.ok()) << split.status().ToString();
}

GroundTruth LiveGroundTruth(const Fixture& f, Metric metric, std::uint64_t rows,
                            const std::vector<bool>& deleted) {
  ExactKnnOptions o;
  o.k = 10;
  o.metric = metric;
  o.threads = 2;
  o.accept = [&](std::size_t, VectorId id) { return id < deleted.size() && !deleted[id]; };
  auto gt = ComputeGroundTruth(ElementType::kFloat32, f.base.bytes(), rows, f.queries.bytes(),
                               f.queries.rows(), kDim, o);
  EXPECT_TRUE(gt.ok()) << gt.status().ToString();
  return gt.ok() ? std::move(*gt) : GroundTruth{};
}


void Journal::Record(const PreparedInPlaceInsert& p) {
  for (const InPlaceListMove& m : p.moves) moves[m.vertex] = m;
  codes.insert(codes.end(), p.code.begin(), p.code.end());
  if (p.vertex != InPlaceGraph::kNoVertex) ++appended;
}

InPlaceRecovery Journal::Recovery() const {
  InPlaceRecovery r;
  for (const auto& [v, m] : moves) r.moves.push_back(m);
  r.appended = appended;
  r.codes = codes;
  return r;
}

double LiveRecall(const InPlaceGraph& g, const Fixture& f, std::uint64_t rows,
                  const std::vector<bool>& deleted) {
  SearchParams p;
  p.k = 10;
  p.list_size = 64;
  auto r = SearchBatch(g.index(), f.queries, p, 2);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return 0;
  for (VectorId id : r->results.ids) {
    EXPECT_TRUE(id == kInvalidVectorId || (id < rows && !deleted[id])) << id;
  }
  auto recall = ComputeRecall(r->results, LiveGroundTruth(f, Metric::kL2, rows, deleted), 10);
  EXPECT_TRUE(recall.ok());
  return recall.ok() ? recall->mean_recall : 0;
}

double LiveRecall(const InPlaceGraph& g, const Fixture& f, std::uint64_t rows) {
  return LiveRecall(g, f, rows, std::vector<bool>(rows, false));
}

}  // namespace strata::testutil
