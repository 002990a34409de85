// Fault injection on the collection's segment files: writes, fsyncs and
// renames of the index files fail during a merge or the first build; each
// failure reaches the caller as an error, the collection keeps serving, and
// after reopening everything acknowledged is there.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>

#include "io/fault_injection.h"
#include "scratch_dir.h"
#include "strata/collection.h"

#include "collection/index_version.h"

namespace strata {
namespace {

constexpr std::uint32_t kDim = 8;

CollectionOptions Options() {
  CollectionOptions o;
  o.dim = kDim;
  o.flat_threshold = 200;
  o.background_merge = false;
  o.graph.R = 12;
  o.graph.L = 24;
  o.graph.pq_bytes = 4;
  o.graph.opq_iterations = 0;
  o.graph.page_shuffle = false;
  o.graph.mem_graph_ratio = 0;
  return o;
}

std::vector<float> Rows(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> v(n * kDim);
  for (float& x : v) x = nd(rng);
  return v;
}

std::vector<VectorId> Ids(VectorId from, std::size_t n) {
  std::vector<VectorId> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = from + i;
  return ids;
}

// Every id in [0, n) except `gone` is stored with rows[id] and found by a
// search for its own vector.
void ExpectIntact(const Collection& c, const std::vector<float>& rows, std::size_t n,
                  const std::set<VectorId>& gone) {
  auto got = c.Get(Ids(0, n));
  ASSERT_TRUE(got.ok());
  for (std::size_t i = 0; i < n; ++i) {
    if (gone.count(i)) {
      EXPECT_FALSE((*got)[i].found) << "deleted id " << i << " came back";
      continue;
    }
    ASSERT_TRUE((*got)[i].found) << "id " << i << " lost";
    EXPECT_EQ((*got)[i].vector,
              std::vector<float>(rows.begin() + i * kDim, rows.begin() + (i + 1) * kDim));
  }
  CollectionSearchParams p;
  p.index.k = 1;
  p.index.list_size = 48;
  for (std::size_t i = 0; i < n; i += 37) {
    if (gone.count(i)) continue;
    auto hits = c.Search(std::span<const float>(rows.data() + i * kDim, kDim), p);
    ASSERT_TRUE(hits.ok());
    ASSERT_FALSE(hits->empty());
    EXPECT_EQ((*hits)[0].id, i);
  }
  EXPECT_EQ(c.Count(), n - gone.size());
}

struct Fault {
  io::FaultPoint point;
  std::uint64_t after;
};
void PrintTo(const Fault& f, std::ostream* os) {
  static const char* kNames[] = {"write", "fsync", "rename"};
  *os << kNames[static_cast<int>(f.point)] << "_after_" << f.after;
}

class CollectionFault : public ::testing::TestWithParam<Fault> {
 protected:
  void TearDown() override { io::ClearFaults(); }
};

TEST_P(CollectionFault, FailedMergeLosesNothing) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  const std::size_t n = 500;
  const auto rows = Rows(n, 11);
  std::set<VectorId> gone = {3, 250, 499};
  {
    auto c = Collection::Open(path, Options());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ASSERT_TRUE((*c)->Upsert(Ids(0, 300), std::span<const float>(rows.data(), 300 * kDim)).ok());
    ASSERT_EQ((*c)->Stats().index_version, 1u);
    ASSERT_TRUE((*c)->Upsert(Ids(300, n - 300),
                             std::span<const float>(rows.data() + 300 * kDim, (n - 300) * kDim))
                    .ok());
    ASSERT_TRUE((*c)->Delete(std::vector<VectorId>(gone.begin(), gone.end())).ok());
    io::ArmFault(GetParam().point, GetParam().after);
    Status st = (*c)->Merge();
    EXPECT_FALSE(st.ok()) << "an injected failure must reach the caller";
    EXPECT_GT(io::InjectedFaults(), 0u);
    io::ClearFaults();
    EXPECT_EQ((*c)->Stats().index_version, 1u);  // still serving the old version
    ExpectIntact(**c, rows, n, gone);
  }
  // Reopen: nothing acknowledged is lost, leftovers are gone, a merge works.
  auto c = Collection::Open(path, CollectionOptions{});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ExpectIntact(**c, rows, n, gone);
  ASSERT_TRUE((*c)->Merge().ok());
  EXPECT_EQ((*c)->Stats().index_version, 2u);
  ExpectIntact(**c, rows, n, gone);
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(path + "/index")) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
}

TEST_P(CollectionFault, FailedFirstBuildKeepsTheWrite) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  const std::size_t n = 260;
  const auto rows = Rows(n, 12);
  {
    auto c = Collection::Open(path, Options());
    ASSERT_TRUE(c.ok());
    io::ArmFault(GetParam().point, GetParam().after);
    // Crosses the threshold: the build fails, the write is durable anyway.
    ASSERT_TRUE((*c)->Upsert(Ids(0, n), rows).ok());
    io::ClearFaults();
    EXPECT_EQ((*c)->Stats().index_version, 0u);
    EXPECT_FALSE((*c)->WaitForMerge().ok());
    ExpectIntact(**c, rows, n, {});
  }
  auto c = Collection::Open(path, Options());  // same threshold
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ((*c)->Stats().index_version, 1u);  // the open retried the build
  ExpectIntact(**c, rows, n, {});
}

INSTANTIATE_TEST_SUITE_P(
    Points, CollectionFault,
    ::testing::Values(Fault{io::FaultPoint::kWrite, 0}, Fault{io::FaultPoint::kWrite, 2},
                      Fault{io::FaultPoint::kFsync, 0}, Fault{io::FaultPoint::kFsync, 1},
                      Fault{io::FaultPoint::kFsync, 3}, Fault{io::FaultPoint::kRename, 0},
                      Fault{io::FaultPoint::kRename, 2}, Fault{io::FaultPoint::kRename, 4}));

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Flips one byte in the middle of `path`.
void CorruptByte(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r+b");
  ASSERT_NE(f, nullptr) << path;
  std::fseek(f, 0, SEEK_END);
  const long size = std::ftell(f);
  std::fseek(f, size / 2, SEEK_SET);
  const int c = std::fgetc(f);
  std::fseek(f, size / 2, SEEK_SET);
  std::fputc(c ^ 0x5a, f);
  std::fclose(f);
}

std::string FindFile(const std::string& dir, const std::string& suffix) {
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return p;
    }
  }
  return "";
}

// Builds a collection with an index version and closes it.
void MakeCollection(const std::string& path, const std::vector<float>& rows, std::size_t n) {
  auto c = Collection::Open(path, Options());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE((*c)->Upsert(Ids(0, n), rows).ok());
  ASSERT_EQ((*c)->Stats().index_version, 1u);
  ASSERT_TRUE((*c)->Close().ok());
}

TEST(CollectionCorruption, DamagedSlotsFileIsCorruptionAtOpen) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  const auto rows = Rows(300, 13);
  MakeCollection(path, rows, 300);
  CorruptByte(FindFile(path + "/index", "slots.bin"));
  auto c = Collection::Open(path, Options());
  EXPECT_EQ(c.status().code(), StatusCode::kCorruption) << c.status().ToString();
}

// A slots file whose checksum is right but which maps two slots to one id
// (ids in order but for the repeat, so the sorted fast path must notice it).
TEST(CollectionCorruption, RepeatedIdInSlotsFileIsCorruptionAtOpen) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  const auto rows = Rows(300, 14);
  MakeCollection(path, rows, 300);
  const std::string slots = FindFile(path + "/index", "slots.bin");
  const std::string vdir = std::filesystem::path(slots).parent_path().string();
  auto ids = collection::ReadSlotsFile(vdir);
  ASSERT_TRUE(ids.ok()) << ids.status().ToString();
  (*ids)[151] = (*ids)[150];
  ASSERT_TRUE(collection::WriteSlotsFile(vdir, *ids).ok());
  auto c = Collection::Open(path, Options());
  EXPECT_EQ(c.status().code(), StatusCode::kCorruption) << c.status().ToString();
}

TEST(CollectionCorruption, DamagedNodeFileIsAnErrorNotAWrongAnswer) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  const auto rows = Rows(300, 14);
  MakeCollection(path, rows, 300);
  CorruptByte(FindFile(path + "/index", "graph.nodes"));
  auto c = Collection::Open(path, Options());
  if (!c.ok()) {
    EXPECT_EQ(c.status().code(), StatusCode::kCorruption) << c.status().ToString();
    return;
  }
  // Searches that read the damaged sector fail with Corruption; none may
  // succeed with a wrong record. Get still serves every vector (RocksDB).
  CollectionSearchParams p;
  p.index.k = 5;
  p.index.list_size = 300;  // touches every page
  bool saw_corruption = false;
  for (std::size_t i = 0; i < 300; i += 7) {
    auto hits = (*c)->Search(std::span<const float>(rows.data() + i * kDim, kDim), p);
    if (!hits.ok()) {
      EXPECT_EQ(hits.status().code(), StatusCode::kCorruption) << hits.status().ToString();
      saw_corruption = true;
    }
  }
  EXPECT_TRUE(saw_corruption);
  auto got = (*c)->Get(Ids(0, 300));
  ASSERT_TRUE(got.ok());
  for (std::size_t i = 0; i < 300; ++i) EXPECT_TRUE((*got)[i].found);
}

TEST(CollectionCorruption, DamagedRocksDbTableIsCorruption) {
  testutil::ScratchDir dir;
  const std::string path = dir.File("c");
  const auto rows = Rows(300, 15);
  MakeCollection(path, rows, 300);
  const std::string sst = FindFile(path + "/db", ".sst");
  ASSERT_FALSE(sst.empty());
  CorruptByte(sst);
  auto c = Collection::Open(path, Options());
  if (!c.ok()) {
    EXPECT_EQ(c.status().code(), StatusCode::kCorruption) << c.status().ToString();
    return;
  }
  auto got = (*c)->Get(Ids(0, 300));
  ASSERT_FALSE(got.ok()) << "a damaged table must not read back as data";
  EXPECT_EQ(got.status().code(), StatusCode::kCorruption) << got.status().ToString();
}

}  // namespace
}  // namespace strata
