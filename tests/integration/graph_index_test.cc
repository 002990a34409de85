// End-to-end graph index: build from a file, open, search over O_DIRECT reads,
// and compare with exact ground truth; reopen, thread counts, corruption and
// bad input; rebuilds that fail or replace an index.
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "scratch_dir.h"
#include "synthetic_dataset.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/graph_index.h"

namespace strata {
namespace {

using Dataset = testutil::TestDataset;

Dataset MakeData(const testutil::ScratchDir& dir, Metric metric, ElementType type,
                 std::uint64_t n, std::uint32_t dim) {
  return testutil::MakeTestDataset(dir, metric, type, n, dim, 200, 11);
}

GraphBuildOptions SmallBuild(Metric metric) {
  GraphBuildOptions b;
  b.metric = metric;
  b.R = 32;
  b.L = 64;
  b.threads = 2;
  return b;
}

BatchSearchResult Search(const GraphIndex& index, const std::string& queries, std::uint32_t L,
                         unsigned threads) {
  auto q = ReadVectorsAsFloat(queries);
  EXPECT_TRUE(q.ok());
  SearchParams p;
  p.k = 10;
  p.list_size = L;
  auto r = SearchBatch(index, *q, p, threads);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return std::move(*r);
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

// Writes a copy of float32 file `from` to `to` (.fbin) with a NaN in row
// `row`, bypassing the dataset writer (which would refuse it).
void WriteWithNan(const std::string& from, const std::string& to, std::uint64_t row) {
  auto m = ReadVectorsAsFloat(from);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  std::span<float> v = m->values<float>();
  v[row * m->dim() + 1] = std::numeric_limits<float>::quiet_NaN();
  std::ofstream out(to, std::ios::binary);
  const std::uint32_t header[2] = {static_cast<std::uint32_t>(m->rows()), m->dim()};
  out.write(reinterpret_cast<const char*>(header), sizeof(header));
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size_bytes()));
  ASSERT_TRUE(out.good());
}

struct Case {
  Metric metric;
  ElementType type;
};

class GraphIndexRecall : public ::testing::TestWithParam<Case> {};

TEST_P(GraphIndexRecall, ReachesHighRecallAgainstExactGroundTruth) {
  testutil::ScratchDir dir;
  const Case c = GetParam();
  const std::uint64_t n = 12000;
  Dataset d = MakeData(dir, c.metric, c.type, n, 48);
  auto report = BuildGraphIndex(d.base, dir.File("idx"), SmallBuild(c.metric));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  auto index = GraphIndex::Open(dir.File("idx"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  BatchSearchResult r = Search(**index, d.queries, 64, 2);
  ExpectValidDistinct(r.results, n);
  auto recall = ComputeRecall(r.results, d.gt, 10);
  ASSERT_TRUE(recall.ok());
  EXPECT_GE(recall->mean_recall, 0.95) << MetricName(c.metric) << " " << ElementTypeName(c.type);
  double pages = 0;
  for (const auto& s : r.stats) pages += s.pages_read;
  EXPECT_GT(pages / r.stats.size(), 10.0);  // really reads from SSD
}

INSTANTIATE_TEST_SUITE_P(
    MetricsAndTypes, GraphIndexRecall,
    ::testing::Values(Case{Metric::kL2, ElementType::kFloat32},
                      Case{Metric::kInnerProduct, ElementType::kFloat32},
                      Case{Metric::kCosine, ElementType::kFloat32},
                      Case{Metric::kL2, ElementType::kUint8},
                      Case{Metric::kInnerProduct, ElementType::kUint8},
                      // uint8 cosine data from the generator sits around +128 in
                      // every coordinate (all cosines near 1); int8 is the
                      // meaningful integer cosine case.
                      Case{Metric::kCosine, ElementType::kInt8}),
    [](const auto& info) {
      return std::string(MetricName(info.param.metric)) + "_" +
             std::string(ElementTypeName(info.param.type));
    });

TEST(GraphIndex, DeterministicAcrossThreadsReopenAndCache) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kL2, ElementType::kFloat32, 5000, 32);
  ASSERT_TRUE(BuildGraphIndex(d.base, dir.File("idx"), SmallBuild(Metric::kL2)).ok());
  auto a = GraphIndex::Open(dir.File("idx"));
  ASSERT_TRUE(a.ok());
  BatchSearchResult one = Search(**a, d.queries, 40, 1);
  BatchSearchResult two = Search(**a, d.queries, 40, 2);
  EXPECT_EQ(one.results.ids, two.results.ids);
  EXPECT_EQ(one.results.distances, two.results.distances);
  a->reset();
  auto b = GraphIndex::Open(dir.File("idx"), {.cache_nodes = 500});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->cached_nodes(), 500u);
  BatchSearchResult cached = Search(**b, d.queries, 40, 2);
  // The cache changes where records come from, not the results.
  EXPECT_EQ(cached.results.ids, one.results.ids);
  std::uint64_t hits = 0, pages_cached = 0, pages_plain = 0;
  for (std::size_t q = 0; q < cached.stats.size(); ++q) {
    hits += cached.stats[q].cache_hits;
    pages_cached += cached.stats[q].pages_read;
    pages_plain += one.stats[q].pages_read;
  }
  EXPECT_GT(hits, 0u);
  EXPECT_LT(pages_cached, pages_plain);
}

TEST(GraphIndex, RejectsWrongDimensionAndDetectsCorruption) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kL2, ElementType::kFloat32, 3000, 32);
  ASSERT_TRUE(BuildGraphIndex(d.base, dir.File("idx"), SmallBuild(Metric::kL2)).ok());
  {
    auto index = GraphIndex::Open(dir.File("idx"));
    ASSERT_TRUE(index.ok());
    auto searcher = (*index)->NewSearcher(SearchParams{});
    ASSERT_TRUE(searcher.ok());
    std::vector<float> wrong(31, 0.5f);
    std::vector<VectorId> ids(10);
    std::vector<float> dists(10);
    QueryStats st;
    Status s = (*searcher)->Search(wrong, SearchParams{}, ids, dists, &st);
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_NE(s.message().find("dimension"), std::string::npos);
    std::vector<float> nan(32, 0.0f);
    nan[3] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE((*searcher)->Search(nan, SearchParams{}, ids, dists, &st).IsInvalidArgument());
  }
  // Flip a byte inside the node file: the manifest check at open (size is
  // unchanged) passes, the sector checksum catches it when the search reads it.
  const std::string nodes = dir.File("idx/graph.nodes");
  FILE* f = std::fopen(nodes.c_str(), "r+b");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  for (long off = 4096 + 100; off < size; off += 4096) {  // every data sector
    std::fseek(f, off, SEEK_SET);
    const int c = std::fgetc(f);
    std::fseek(f, off, SEEK_SET);
    std::fputc(c ^ 0x5A, f);
  }
  std::fclose(f);
  auto index = GraphIndex::Open(dir.File("idx"));
  ASSERT_TRUE(index.ok());
  auto q = ReadVectorsAsFloat(d.queries);
  ASSERT_TRUE(q.ok());
  auto r = SearchBatch(**index, *q, SearchParams{}, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_TRUE(GraphIndex::Open(dir.File("idx"), {.verify_checksums = true}).status().IsCorruption());
  // A damaged manifest.
  FILE* m = std::fopen(dir.File("idx/manifest.json").c_str(), "r+b");
  ASSERT_NE(m, nullptr);
  std::fseek(m, 20, SEEK_SET);
  std::fputc('#', m);
  std::fclose(m);
  EXPECT_TRUE(GraphIndex::Open(dir.File("idx")).status().IsCorruption());
  EXPECT_TRUE(GraphIndex::Open(dir.File("nothing")).status().IsNotFound());
}

// A build that fails, whether on bad input or on an I/O error after its
// write phase began, leaves the previous index as it was: same files, same
// results, no staging directory beside it.
TEST(GraphIndex, FailedRebuildKeepsThePreviousIndex) {
  testutil::ScratchDir dir;
  Dataset d = MakeData(dir, Metric::kL2, ElementType::kFloat32, 3000, 32);
  const std::string idx = dir.File("idx");
  ASSERT_TRUE(BuildGraphIndex(d.base, idx, SmallBuild(Metric::kL2)).ok());
  const std::vector<std::string> files = ListDir(idx);
  BatchSearchResult before;
  {
    auto index = GraphIndex::Open(idx);
    ASSERT_TRUE(index.ok());
    before = Search(**index, d.queries, 40, 1);
  }
  auto expect_unchanged = [&](const char* what) {
    EXPECT_EQ(ListDir(idx), files) << what;
    EXPECT_TRUE(StagingLeftovers(dir.path()).empty()) << what;
    auto index = GraphIndex::Open(idx, {.verify_checksums = true});
    ASSERT_TRUE(index.ok()) << what << ": " << index.status().ToString();
    EXPECT_EQ((*index)->num_vectors(), 3000u) << what;
    BatchSearchResult after = Search(**index, d.queries, 40, 1);
    EXPECT_EQ(after.results.ids, before.results.ids) << what;
    EXPECT_EQ(after.results.distances, before.results.distances) << what;
  };

  // Twice the vectors: the new node file outgrows the old one, and the file
  // size limit set at the old one's size fails it part-way.
  testutil::ScratchDir other;
  Dataset bigger = MakeData(other, Metric::kL2, ElementType::kFloat32, 6000, 32);
  const auto old_nodes = std::filesystem::file_size(idx + "/graph.nodes");
  {
    FileSizeLimit limit(old_nodes);
    ASSERT_TRUE(limit.ok());
    auto r = BuildGraphIndex(bigger.base, idx, SmallBuild(Metric::kL2));
    ASSERT_FALSE(r.ok());
    EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
  }
  expect_unchanged("I/O error while writing");

  // A NaN row is found while loading.
  const std::string nan_base = other.File("nan.fbin");
  WriteWithNan(bigger.base, nan_base, 4321);
  auto r = BuildGraphIndex(nan_base, idx, SmallBuild(Metric::kL2));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  expect_unchanged("NaN row");
}

// A rebuild replaces the index: the new vectors, only the new index's files
// (or, where other files are kept in the directory, those too), and stale
// staging directories of a crashed build gone.
TEST(GraphIndex, RebuildReplacesTheIndex) {
  testutil::ScratchDir dir;
  Dataset small = MakeData(dir, Metric::kL2, ElementType::kFloat32, 3000, 32);
  const std::string idx = dir.File("idx");
  ASSERT_TRUE(BuildGraphIndex(small.base, idx, SmallBuild(Metric::kL2)).ok());
  const std::vector<std::string> files = ListDir(idx);
  EXPECT_EQ(files,
            (std::vector<std::string>{"entry.bin", "graph.nodes", "manifest.json", "pq.bin"}));
  // What a crashed build leaves (its pid above any pid_max, so never alive),
  // and a directory that only looks similar (not ours to remove).
  const std::string stale = dir.File("idx.staging-4194305-0");
  const std::string similar = dir.File("idx.staging-keep");
  ASSERT_TRUE(std::filesystem::create_directory(stale));
  std::ofstream(stale + "/graph.nodes") << "partial";
  ASSERT_TRUE(std::filesystem::create_directory(similar));

  testutil::ScratchDir other;
  Dataset bigger = MakeData(other, Metric::kL2, ElementType::kFloat32, 5000, 32);
  auto report = BuildGraphIndex(bigger.base, idx, SmallBuild(Metric::kL2));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->num_vectors, 5000u);
  std::uint64_t bytes = 0;
  for (const char* f : {"graph.nodes", "pq.bin", "entry.bin"}) {
    bytes += std::filesystem::file_size(idx + "/" + f);
  }
  EXPECT_EQ(report->index_bytes, bytes);
  EXPECT_EQ(ListDir(idx), files);
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(similar));
  std::filesystem::remove(similar);
  EXPECT_TRUE(StagingLeftovers(dir.path()).empty());
  {
    auto index = GraphIndex::Open(idx, {.verify_checksums = true});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ((*index)->num_vectors(), 5000u);
    BatchSearchResult r = Search(**index, bigger.queries, 64, 2);
    ExpectValidDistinct(r.results, 5000);
    auto recall = ComputeRecall(r.results, bigger.gt, 10);
    ASSERT_TRUE(recall.ok());
    EXPECT_GE(recall->mean_recall, 0.9);
  }

  // A file of the user's in the directory is kept (the directory is not
  // swapped out then; the new files are renamed in).
  std::ofstream(idx + "/notes.txt") << "mine";
  ASSERT_TRUE(BuildGraphIndex(small.base, idx, SmallBuild(Metric::kL2)).ok());
  std::vector<std::string> with_notes = files;
  with_notes.push_back("notes.txt");
  std::sort(with_notes.begin(), with_notes.end());
  EXPECT_EQ(ListDir(idx), with_notes);
  EXPECT_TRUE(StagingLeftovers(dir.path()).empty());
  auto index = GraphIndex::Open(idx, {.verify_checksums = true});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->num_vectors(), 3000u);

  // Through a symbolic link: the link stays, its target gets the new index.
  index->reset();
  std::filesystem::create_directory_symlink(idx, dir.File("link"));
  ASSERT_TRUE(BuildGraphIndex(bigger.base, dir.File("link"), SmallBuild(Metric::kL2)).ok());
  EXPECT_TRUE(std::filesystem::is_symlink(dir.File("link")));
  EXPECT_TRUE(StagingLeftovers(dir.path()).empty());
  index = GraphIndex::Open(idx);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->num_vectors(), 5000u);

  // A path that is a file is refused.
  std::ofstream(dir.File("plain")) << "x";
  EXPECT_TRUE(BuildGraphIndex(small.base, dir.File("plain"), SmallBuild(Metric::kL2))
                  .status()
                  .IsInvalidArgument());
}

}  // namespace
}  // namespace strata
