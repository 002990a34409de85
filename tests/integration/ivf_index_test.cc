// End-to-end IVF index (RaBitQ-SSD): build from a file, open, search every
// read pipeline over O_DIRECT reads and compare with exact ground truth;
// pipeline agreement, alpha = 1, each metric, raw re-ranking, split codes,
// reopen, damaged pages and bad input; rebuilds that fail or replace an index.
#include "strata/ivf_index.h"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "scratch_dir.h"
#include "synthetic_dataset.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/graph_index.h"

namespace strata {
namespace {

constexpr std::uint64_t kN = 10000;
constexpr std::uint32_t kDim = 96;  // D' = 128: D_m = 64 is a real split

using Dataset = testutil::TestDataset;

Dataset MakeData(const testutil::ScratchDir& dir, Metric metric) {
  return testutil::MakeTestDataset(dir, metric, ElementType::kFloat32, kN, kDim, 200, 21);
}

IvfBuildOptions SmallBuild(Metric metric) {
  IvfBuildOptions b;
  b.metric = metric;
  b.clusters = 40;
  b.threads = 2;
  return b;
}

struct SearchRun {
  double recall = 0;
  QueryStats mean;  // sums divided by queries (integers truncated)
  double pages = 0, dropped = 0, wasted = 0, reranked = 0, survivors = 0;
  GroundTruth results;
};

SearchRun Search(const Index& index, const Dataset& d, IvfPipeline pipeline, std::uint32_t nprobe,
                 unsigned threads = 2, float alpha = 0.4f) {
  auto q = ReadVectorsAsFloat(d.queries);
  EXPECT_TRUE(q.ok());
  SearchParams p;
  p.k = 10;
  p.nprobe = nprobe;
  p.pipeline = pipeline;
  p.drain_alpha = alpha;
  auto r = SearchBatch(index, *q, p, threads);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  SearchRun out;
  if (!r.ok()) return out;
  auto recall = ComputeRecall(r->results, d.gt, 10);
  EXPECT_TRUE(recall.ok());
  out.recall = recall->mean_recall;
  for (const QueryStats& s : r->stats) {
    out.pages += s.pages_read;
    out.dropped += s.pages_dropped;
    out.wasted += s.wasted_reads;
    out.reranked += s.reranked;
    out.survivors += s.survivors;
    EXPECT_EQ(s.clusters_probed, nprobe);
    EXPECT_LE(s.reranked, s.survivors);
  }
  const double nq = static_cast<double>(r->stats.size());
  out.pages /= nq;
  out.dropped /= nq;
  out.wasted /= nq;
  out.reranked /= nq;
  out.survivors /= nq;
  out.results = std::move(r->results);
  return out;
}

void ExpectValidDistinct(const GroundTruth& r, std::uint64_t n) {
  for (std::uint64_t q = 0; q < r.num_queries; ++q) {
    std::set<VectorId> ids;
    for (std::uint32_t i = 0; i < r.k; ++i) {
      const VectorId id = r.ids[q * r.k + i];
      ASSERT_LT(id, n);
      ASSERT_TRUE(ids.insert(id).second) << "duplicate id in query " << q;
    }
  }
}

// Makes every write that would grow a file past `bytes` fail with EFBIG (as
// a full disk or a quota would), until destroyed: an I/O error in the middle
// of a build's write phase.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &saved_);
    handler_ = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of the signal
    rlimit lim = saved_;
    lim.rlim_cur = bytes;
    ok_ = ::setrlimit(RLIMIT_FSIZE, &lim) == 0;
  }
  ~FileSizeLimit() {
    ::setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, handler_);
  }
  bool ok() const { return ok_; }

 private:
  rlimit saved_{};
  void (*handler_)(int) = SIG_DFL;
  bool ok_ = false;
};

// Sorted names of the entries of `dir`.
std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Entries of `dir` named like a build's staging directory.
std::vector<std::string> StagingLeftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& name : ListDir(dir)) {
    if (name.find(".staging-") != std::string::npos) out.push_back(name);
  }
  return out;
}

class IvfIndexTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testutil::ScratchDir();
    data_ = new Dataset(MakeData(*dir_, Metric::kL2));
    auto report = BuildIvfIndex(data_->base, dir_->File("idx"), SmallBuild(Metric::kL2));
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_EQ(report->clusters, 40u);
    EXPECT_EQ(report->prefix_bits, 128u);
    // RAM per vector: D_m/8 + 12 bytes of code and factors (+ padding of
    // the last block of each cluster) + a 4-byte id.
    EXPECT_GE(report->ram_bytes_per_vector, 128 / 8 + 12 + 4);
    EXPECT_LE(report->ram_bytes_per_vector, 128 / 8 + 12 + 4 + 4);
  }
  static void TearDownTestSuite() {
    delete data_;
    delete dir_;
  }
  static std::unique_ptr<Index> OpenIndex() {
    auto index = Index::Open(dir_->File("idx"));
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    return index.ok() ? std::move(*index) : nullptr;
  }
  static testutil::ScratchDir* dir_;
  static Dataset* data_;
};
testutil::ScratchDir* IvfIndexTest::dir_ = nullptr;
Dataset* IvfIndexTest::data_ = nullptr;

TEST_F(IvfIndexTest, EveryPipelineReachesHighRecallAndTheyAgree) {
  auto index = OpenIndex();
  ASSERT_NE(index, nullptr);
  EXPECT_EQ(index->type(), "ivf");
  EXPECT_EQ(index->dim(), kDim);
  EXPECT_EQ(index->num_vectors(), kN);
  EXPECT_GT(index->disk_bytes(), 0u);
  std::map<IvfPipeline, SearchRun> runs;
  for (IvfPipeline p : {IvfPipeline::kNaive, IvfPipeline::kCoalesced, IvfPipeline::kOverlapped,
                        IvfPipeline::kScheduled, IvfPipeline::kFull}) {
    runs[p] = Search(*index, *data_, p, 10);
    ExpectValidDistinct(runs[p].results, kN);
    EXPECT_GE(runs[p].recall, 0.9) << IvfPipelineName(p);
    EXPECT_GT(runs[p].pages, 1.0) << IvfPipelineName(p);  // really reads from SSD
  }
  // Naive, coalesced and scheduled differ only where a probabilistic bound
  // fails: recall within 0.5 points.
  EXPECT_NEAR(runs[IvfPipeline::kNaive].recall, runs[IvfPipeline::kCoalesced].recall, 0.005);
  EXPECT_NEAR(runs[IvfPipeline::kNaive].recall, runs[IvfPipeline::kScheduled].recall, 0.005);
  // Coalescing reads each page once: fewer pages than one read per candidate.
  EXPECT_LT(runs[IvfPipeline::kCoalesced].pages, runs[IvfPipeline::kNaive].pages);
  // Scheduling drops pages the naive order would have read.
  EXPECT_GT(runs[IvfPipeline::kScheduled].dropped + runs[IvfPipeline::kFull].dropped, 0.0);
  // More probes, more recall (up to a failed bound or two).
  EXPECT_GE(Search(*index, *data_, IvfPipeline::kFull, 40).recall,
            runs[IvfPipeline::kFull].recall - 0.005);
  for (const auto& [p, r] : runs) {
    std::printf(
        "%-10s recall %.4f pages %.2f dropped %.2f wasted %.2f reranked %.1f survivors %.1f\n",
        IvfPipelineName(p), r.recall, r.pages, r.dropped, r.wasted, r.reranked, r.survivors);
  }
}

TEST_F(IvfIndexTest, FullWithAlphaOneBehavesAsScheduled) {
  auto index = OpenIndex();
  ASSERT_NE(index, nullptr);
  const SearchRun scheduled = Search(*index, *data_, IvfPipeline::kScheduled, 10);
  const SearchRun full = Search(*index, *data_, IvfPipeline::kFull, 10, 2, 1.0f);
  EXPECT_NEAR(full.recall, scheduled.recall, 0.002);
}

TEST_F(IvfIndexTest, ResultsDoNotDependOnThreadsOrReopening) {
  auto index = OpenIndex();
  ASSERT_NE(index, nullptr);
  const SearchRun a = Search(*index, *data_, IvfPipeline::kCoalesced, 8, 1);
  auto again = OpenIndex();
  ASSERT_NE(again, nullptr);
  const SearchRun b = Search(*again, *data_, IvfPipeline::kCoalesced, 8, 2);
  EXPECT_EQ(a.results.ids, b.results.ids);
  EXPECT_EQ(a.results.distances, b.results.distances);
}

TEST_F(IvfIndexTest, WrongDimensionAndBadParamsAreRejected) {
  auto index = OpenIndex();
  ASSERT_NE(index, nullptr);
  auto searcher = index->NewSearcher(SearchParams{});
  ASSERT_TRUE(searcher.ok());
  std::vector<VectorId> ids(10);
  std::vector<float> dist(10);
  std::vector<float> q(kDim + 1, 0.5f);
  EXPECT_EQ((*searcher)->Search(q, SearchParams{}, ids, dist, nullptr).code(),
            StatusCode::kInvalidArgument);
  q.resize(kDim);
  SearchParams bad;
  bad.drain_alpha = 0.0f;
  EXPECT_EQ((*searcher)->Search(q, bad, ids, dist, nullptr).code(), StatusCode::kInvalidArgument);
  SearchParams wide;
  wide.inflight = 64;  // the searcher was made for the default 16
  EXPECT_EQ((*searcher)->Search(q, wide, ids, dist, nullptr).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE((*searcher)->Search(q, SearchParams{}, ids, dist, nullptr).ok());
  // Opened as the wrong type.
  EXPECT_EQ(GraphIndex::Open(dir_->File("idx")).status().code(), StatusCode::kInvalidArgument);
}

TEST(IvfIndex, EachMetricReachesHighRecall) {
  for (Metric metric : {Metric::kInnerProduct, Metric::kCosine}) {
    testutil::ScratchDir dir;
    Dataset d = MakeData(dir, metric);
    auto report = BuildIvfIndex(d.base, dir.File("idx"), SmallBuild(metric));
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    auto index = IvfIndex::Open(dir.File("idx"));
    ASSERT_TRUE(index.ok());
    const SearchRun r = Search(**index, d, IvfPipeline::kFull, 12);
    EXPECT_GE(r.recall, 0.85) << MetricName(metric);
  }
}

TEST(IvfIndex, RawRerankingAndSplitCodesAndFlatCoarse) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kL2);
  IvfBuildOptions raw = SmallBuild(Metric::kL2);
  raw.rerank = "raw";
  raw.prefix_bits = 64;  // D_m = D'/2
  raw.coarse = "flat";
  auto report = BuildIvfIndex(d.base, dir.File("raw"), raw);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->record_bytes, kDim * 4);
  EXPECT_EQ(report->prefix_bits, 64u);
  auto index = IvfIndex::Open(dir.File("raw"));
  ASSERT_TRUE(index.ok());
  EXPECT_NE((*index)->Describe().find("D_m=64/128"), std::string::npos) << (*index)->Describe();
  const SearchRun r = Search(**index, d, IvfPipeline::kScheduled, 40);  // every cluster
  EXPECT_GE(r.recall, 0.97);
  // Exact re-ranking: the distances are the exact ones for the ids found.
  for (std::uint64_t q = 0; q < 20; ++q) {
    EXPECT_NEAR(r.results.distances[q * 10], d.gt.distances[q * 10],
                1e-3f * (1 + d.gt.distances[q * 10]));
  }
  // Split ex-code index at D_m = D'/2 still searches well.
  IvfBuildOptions split = SmallBuild(Metric::kL2);
  split.prefix_bits = 64;
  ASSERT_TRUE(BuildIvfIndex(d.base, dir.File("split"), split).ok());
  auto si = IvfIndex::Open(dir.File("split"));
  ASSERT_TRUE(si.ok());
  EXPECT_GE(Search(**si, d, IvfPipeline::kFull, 12).recall, 0.88);
}

TEST(IvfIndex, BothRecordOrdersSearchWellAndAreRecorded) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kL2);
  for (const char* order : {"centroid", "locality"}) {
    IvfBuildOptions o = SmallBuild(Metric::kL2);
    o.page_order = order;
    ASSERT_TRUE(BuildIvfIndex(d.base, dir.File(order), o).ok()) << order;
    std::ifstream manifest(dir.File(std::string(order) + "/manifest.json"));
    const std::string text((std::istreambuf_iterator<char>(manifest)),
                           std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(std::string("\"page_order\": \"") + order + "\""), std::string::npos)
        << text;
    auto index = IvfIndex::Open(dir.File(order));
    ASSERT_TRUE(index.ok());
    const SearchRun r = Search(**index, d, IvfPipeline::kFull, 12);
    EXPECT_GE(r.recall, 0.88) << order;
    ExpectValidDistinct(r.results, kN);
  }
}

TEST(IvfIndex, DamagedPagesAreDetected) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kL2);
  ASSERT_TRUE(BuildIvfIndex(d.base, dir.File("idx"), SmallBuild(Metric::kL2)).ok());
  const std::string records = dir.File("idx/ivf.records");
  const auto size = std::filesystem::file_size(records);
  {
    // Flip one payload byte in every data page.
    std::FILE* f = std::fopen(records.c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    for (std::uint64_t off = 4096 + 100; off < size; off += 4096) {
      std::fseek(f, static_cast<long>(off), SEEK_SET);
      const int c = std::fgetc(f);
      std::fseek(f, static_cast<long>(off), SEEK_SET);
      std::fputc(c ^ 0x01, f);
    }
    std::fclose(f);
  }
  OpenOptions verify;
  verify.verify_checksums = true;
  EXPECT_EQ(IvfIndex::Open(dir.File("idx"), verify).status().code(), StatusCode::kCorruption);
  auto index = IvfIndex::Open(dir.File("idx"));
  ASSERT_TRUE(index.ok());
  auto q = ReadVectorsAsFloat(d.queries);
  ASSERT_TRUE(q.ok());
  for (IvfPipeline p : {IvfPipeline::kNaive, IvfPipeline::kOverlapped, IvfPipeline::kFull}) {
    SearchParams params;
    params.pipeline = p;
    auto r = SearchBatch(**index, *q, params, 1);
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption) << IvfPipelineName(p);
  }
  // A damaged RAM blob is refused at open.
  {
    std::FILE* f = std::fopen(dir.File("idx/ivf.ram").c_str(), "r+b");
    ASSERT_NE(f, nullptr);
    std::fseek(f, -7, SEEK_END);
    std::fputc(0x42, f);
    std::fclose(f);
  }
  EXPECT_EQ(IvfIndex::Open(dir.File("idx")).status().code(), StatusCode::kCorruption);
}

TEST(IvfIndex, BadBuildOptionsAreRejected) {
  IvfBuildOptions o;
  o.prefix_bits = 100;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = {};
  o.bits = 10;
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = {};
  o.rerank = "pq";
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = {};
  o.coarse = "hnsw";
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  o = {};
  o.page_order = "random";
  EXPECT_EQ(o.Validate().code(), StatusCode::kInvalidArgument);
  testutil::ScratchDir dir;
  EXPECT_FALSE(BuildIvfIndex(dir.File("missing.fbin"), dir.File("idx"), IvfBuildOptions{}).ok());
}

// A build that fails, on bad input or on an I/O error after its write phase
// began, leaves the previous index as it was: same files, same results, no
// staging directory beside it.
TEST(IvfIndex, FailedRebuildKeepsThePreviousIndex) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kCosine);
  const std::string idx = dir.File("idx");
  ASSERT_TRUE(BuildIvfIndex(d.base, idx, SmallBuild(Metric::kCosine)).ok());
  const std::vector<std::string> files = ListDir(idx);
  // Coalesced reads give the same results on every open (the overlapped and
  // scheduled pipelines depend on when reads complete).
  SearchRun before;
  {
    auto index = IvfIndex::Open(idx);
    ASSERT_TRUE(index.ok());
    before = Search(**index, d, IvfPipeline::kCoalesced, 12, 1);
  }
  auto expect_unchanged = [&](const char* what) {
    EXPECT_EQ(ListDir(idx), files) << what;
    EXPECT_TRUE(StagingLeftovers(dir.path()).empty()) << what;
    OpenOptions verify;
    verify.verify_checksums = true;
    auto index = IvfIndex::Open(idx, verify);
    ASSERT_TRUE(index.ok()) << what << ": " << index.status().ToString();
    EXPECT_EQ((*index)->num_vectors(), kN) << what;
    const SearchRun after = Search(**index, d, IvfPipeline::kCoalesced, 12, 1);
    EXPECT_EQ(after.results.ids, before.results.ids) << what;
    EXPECT_EQ(after.results.distances, before.results.distances) << what;
  };

  // Twice the vectors: the records file outgrows the old one, and the file
  // size limit set at the old one's size fails it part-way.
  testutil::ScratchDir other;
  Dataset bigger = testutil::MakeTestDataset(other, Metric::kCosine, ElementType::kFloat32, 2 * kN,
                                             kDim, 20, 22);
  const auto old_records = std::filesystem::file_size(idx + "/ivf.records");
  {
    FileSizeLimit limit(old_records);
    ASSERT_TRUE(limit.ok());
    auto r = BuildIvfIndex(bigger.base, idx, SmallBuild(Metric::kCosine));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kIOError) << r.status().ToString();
  }
  expect_unchanged("I/O error while writing");

  // A zero vector has no cosine distance: found while loading.
  {
    auto m = ReadVectorsAsFloat(bigger.base);
    ASSERT_TRUE(m.ok());
    std::span<float> v = m->values<float>();
    std::fill_n(v.begin() + 777 * kDim, kDim, 0.0f);
    ASSERT_TRUE(WriteDataset(other.File("zero.fbin"), *m).ok());
  }
  auto r = BuildIvfIndex(other.File("zero.fbin"), idx, SmallBuild(Metric::kCosine));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  expect_unchanged("zero vector under cosine");
}

// A rebuild replaces the index, even one of the other type: only the new
// index's files remain, with the new vectors.
TEST(IvfIndex, RebuildReplacesTheIndex) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kL2);
  const std::string idx = dir.File("idx");
  GraphBuildOptions graph;
  graph.R = 16;
  graph.L = 32;
  graph.threads = 2;
  ASSERT_TRUE(BuildGraphIndex(d.base, idx, graph).ok());
  auto report = BuildIvfIndex(d.base, idx, SmallBuild(Metric::kL2));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  const std::vector<std::string> files{"ivf.ram", "ivf.records", "manifest.json"};
  EXPECT_EQ(ListDir(idx), files);
  EXPECT_EQ(report->index_bytes, std::filesystem::file_size(idx + "/ivf.ram") +
                                     std::filesystem::file_size(idx + "/ivf.records"));
  {
    auto index = Index::Open(idx);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ((*index)->type(), "ivf");
    EXPECT_EQ((*index)->num_vectors(), kN);
  }

  testutil::ScratchDir other;
  Dataset smaller =
      testutil::MakeTestDataset(other, Metric::kL2, ElementType::kFloat32, kN / 2, kDim, 100, 23);
  report = BuildIvfIndex(smaller.base, idx, SmallBuild(Metric::kL2));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->num_vectors, kN / 2);
  EXPECT_EQ(ListDir(idx), files);
  EXPECT_TRUE(StagingLeftovers(dir.path()).empty());
  OpenOptions verify;
  verify.verify_checksums = true;
  auto index = IvfIndex::Open(idx, verify);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->num_vectors(), kN / 2);
  const SearchRun r = Search(**index, smaller, IvfPipeline::kFull, 12);
  ExpectValidDistinct(r.results, kN / 2);
  EXPECT_GE(r.recall, 0.85);
}

}  // namespace
}  // namespace strata
