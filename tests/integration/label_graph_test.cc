// A graph index built with labels (GraphBuildOptions::labels: Gollapudi et
// al., "Filtered-DiskANN", WWW 2023, FilteredVamana) searched from SSD: a
// query near one class filtered to another is answered by a walk the filter
// steers from the label's start row, where the ordinary graph's filtered
// walk fills its list with the query's own class and finds almost nothing.
#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scratch_dir.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/graph_index.h"
#include "strata/labels.h"

namespace strata {
namespace {

constexpr std::uint64_t kRows = 6000;
constexpr std::uint32_t kDim = 24;
constexpr std::uint32_t kClasses = 8;
constexpr std::size_t kQueries = 120;

class ClassFilter final : public IdFilter {
 public:
  ClassFilter(const std::vector<std::uint32_t>* cls, std::uint32_t want) : cls_(cls), want_(want) {}
  bool Accept(std::uint64_t id) const override { return id < cls_->size() && (*cls_)[id] == want_; }

 private:
  const std::vector<std::uint32_t>* cls_;
  std::uint32_t want_;
};

class LabelGraph : public ::testing::Test {
 protected:
  void SetUp() override {
    std::mt19937_64 rng(7);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<float> centres(kClasses * kDim);
    for (float& x : centres) x = 4.0f * g(rng);
    auto base = VectorMatrix::Allocate(ElementType::kFloat32, kRows, kDim);
    ASSERT_TRUE(base.ok());
    std::span<float> bv = base->values<float>();
    for (std::uint64_t i = 0; i < kRows; ++i) {
      const auto c = static_cast<std::uint32_t>(rng() % kClasses);
      cls_.push_back(c);
      labels_.AddRow({c});
      for (std::uint32_t j = 0; j < kDim; ++j) bv[i * kDim + j] = centres[c * kDim + j] + g(rng);
    }
    base_path_ = dir_.File("base.fbin");
    ASSERT_TRUE(WriteDataset(base_path_, *base).ok());
    // Queries near class a, filtered to class b != a.
    for (std::size_t q = 0; q < kQueries; ++q) {
      const auto a = static_cast<std::uint32_t>(rng() % kClasses);
      const auto b = (a + 1 + static_cast<std::uint32_t>(rng() % (kClasses - 1))) % kClasses;
      want_.push_back(b);
      std::vector<float> query(kDim);
      for (std::uint32_t j = 0; j < kDim; ++j) query[j] = centres[a * kDim + j] + g(rng);
      std::vector<std::pair<float, VectorId>> d;
      for (std::uint64_t r = 0; r < kRows; ++r) {
        if (cls_[r] != b) continue;
        float s = 0;
        for (std::uint32_t j = 0; j < kDim; ++j) {
          const float x = query[j] - bv[r * kDim + j];
          s += x * x;
        }
        d.emplace_back(s, r);
      }
      std::sort(d.begin(), d.end());
      std::set<VectorId> t;
      for (int j = 0; j < 10; ++j) t.insert(d[j].second);
      truth_.push_back(t);
      queries_.insert(queries_.end(), query.begin(), query.end());
    }
    for (std::size_t q = 0; q < kQueries; ++q) filters_.emplace_back(&cls_, want_[q]);
  }

  static GraphBuildOptions Options(bool shuffled) {
    GraphBuildOptions b;
    b.R = 24;
    b.L = 48;
    b.pq_bytes = 8;
    b.threads = 2;
    if (shuffled) {
      EXPECT_TRUE(ApplyBuildProfile("default", &b).ok());
    }
    return b;
  }

  // Recall@10 of filtered searches at L 64; every result must pass.
  double Recall(const Index& index, bool steer) {
    auto q = VectorMatrix::Allocate(ElementType::kFloat32, kQueries, kDim);
    EXPECT_TRUE(q.ok());
    std::copy(queries_.begin(), queries_.end(), q->values<float>().begin());
    std::vector<std::vector<std::uint64_t>> entries(kQueries);
    for (std::size_t i = 0; i < kQueries; ++i) {
      if (steer) entries[i].push_back(index.label_start_rows()[want_[i]]);
    }
    SearchParams p;
    p.k = 10;
    p.list_size = 64;
    auto r = SearchBatch(index, *q, p, 2, [&](std::size_t i, SearchParams* qp) {
      qp->filter = &filters_[i];
      if (steer) {
        qp->entry_rows = &entries[i];
        qp->filter_steers_walk = true;
      }
    });
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return 0;
    double hits = 0;
    for (std::size_t i = 0; i < kQueries; ++i) {
      for (std::uint32_t j = 0; j < 10; ++j) {
        const VectorId id = r->results.ids[i * 10 + j];
        if (id == kInvalidVectorId) continue;
        EXPECT_TRUE(filters_[i].Accept(id)) << "query " << i << " id " << id;
        hits += truth_[i].count(id);
      }
    }
    return hits / (10.0 * kQueries);
  }

  testutil::ScratchDir dir_;
  std::string base_path_;
  std::vector<std::uint32_t> cls_;
  LabelSets labels_;
  std::vector<float> queries_;
  std::vector<std::uint32_t> want_;
  std::vector<std::set<VectorId>> truth_;
  std::vector<ClassFilter> filters_;
};

TEST_F(LabelGraph, SteeredWalkFindsAnotherClassOnPackedAndShuffledLayouts) {
  GraphBuildOptions plain = Options(false);
  ASSERT_TRUE(BuildGraphIndex(base_path_, dir_.File("plain"), plain).ok());
  auto plain_index = Index::Open(dir_.File("plain"), {});
  ASSERT_TRUE(plain_index.ok());
  EXPECT_TRUE((*plain_index)->label_start_rows().empty());
  const double plain_recall = Recall(**plain_index, false);
  EXPECT_LT(plain_recall, 0.5) << "the data no longer shows the failure the label build fixes";

  for (const bool shuffled : {false, true}) {
    SCOPED_TRACE(shuffled ? "shuffled" : "packed");
    const std::string path = dir_.File(shuffled ? "labels_shuffled" : "labels_packed");
    GraphBuildOptions b = Options(shuffled);
    b.labels = &labels_;
    auto report = BuildGraphIndex(base_path_, path, b);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    auto index = Index::Open(path, {});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_EQ((*index)->label_start_rows().size(), kClasses);
    for (std::uint32_t c = 0; c < kClasses; ++c) {
      EXPECT_EQ(cls_[(*index)->label_start_rows()[c]], c);
    }
    const double steered = Recall(**index, true);
    EXPECT_GE(steered, 0.9) << "plain walk: " << plain_recall;
    // Unsteered, the same index walks as an ordinary one: still correct.
    Recall(**index, false);
  }
}

TEST_F(LabelGraph, BadLabelsAndCorruptStartsAreErrors) {
  LabelSets short_labels;
  short_labels.AddRow({0});
  GraphBuildOptions b = Options(false);
  b.labels = &short_labels;
  auto bad = BuildGraphIndex(base_path_, dir_.File("bad"), b);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("labels have 1 rows"), std::string::npos)
      << bad.status().ToString();

  b.labels = &labels_;
  const std::string path = dir_.File("corrupt");
  ASSERT_TRUE(BuildGraphIndex(base_path_, path, b).ok());
  {
    std::fstream f(path + "/label_starts.bin", std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good());
    f.seekp(-6, std::ios::end);
    f.put('\x7f');
  }
  auto index = Index::Open(path, {});
  ASSERT_FALSE(index.ok());
  EXPECT_NE(index.status().ToString().find("label_starts.bin"), std::string::npos)
      << index.status().ToString();
}

}  // namespace
}  // namespace strata
