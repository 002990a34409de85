// MergeIvfIndex against its contract: row numbering (surviving old rows in
// order, then new rows), deleted rows gone, every live row findable, recall
// within reach of a fresh build of the same live set, oversize clusters
// split, untouched clusters copied byte for byte, failures leave the old
// index, bad input rejected.
#include "index/ivf_index_merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "base/aligned_buffer.h"
#include "format/manifest.h"
#include "index/ivf_files.h"
#include "ivf/ivf_test_util.h"
#include "scratch_dir.h"
#include "search/ivf_index_data.h"
#include "strata/dataset.h"

namespace strata {
namespace {

using ivf::testing::ClusteredRows;

constexpr std::uint32_t kDim = 32;
constexpr std::uint64_t kBase = 6000;
constexpr std::uint64_t kClusters = 20;  // target 300 per cluster

IvfBuildOptions Options(Metric metric = Metric::kL2, const std::string& rerank = "excode") {
  IvfBuildOptions o;
  o.metric = metric;
  o.clusters = kClusters;
  o.rerank = rerank;
  o.threads = 2;
  return o;
}

void WriteRows(const std::string& path, const std::vector<float>& rows) {
  auto w = DatasetWriter::Create(path, ElementType::kFloat32, kDim);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->AppendFloat(rows).ok());
  ASSERT_TRUE((*w)->Finish().ok());
}

void Build(const testutil::ScratchDir& dir, const std::vector<float>& rows,
           const std::string& index, const IvfBuildOptions& o) {
  const std::string base = dir.File(index + ".fbin");
  WriteRows(base, rows);
  auto r = BuildIvfIndex(base, dir.File(index), o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

std::vector<float> Rows(const std::vector<float>& all, std::uint64_t first, std::uint64_t count) {
  return {all.begin() + static_cast<std::ptrdiff_t>(first * kDim),
          all.begin() + static_cast<std::ptrdiff_t>((first + count) * kDim)};
}

// The live set in the merged numbering: surviving old rows, then new rows.
std::vector<float> LiveRows(const std::vector<float>& old_rows,
                            const std::vector<std::uint8_t>& deleted,
                            const std::vector<float>& new_rows) {
  std::vector<float> live;
  for (std::size_t r = 0; r < deleted.size(); ++r) {
    if (!deleted[r]) {
      live.insert(live.end(), old_rows.begin() + static_cast<std::ptrdiff_t>(r * kDim),
                  old_rows.begin() + static_cast<std::ptrdiff_t>((r + 1) * kDim));
    }
  }
  live.insert(live.end(), new_rows.begin(), new_rows.end());
  return live;
}

std::vector<VectorId> SearchOne(Searcher& s, const float* q, std::uint32_t k, std::uint32_t nprobe,
                                std::vector<float>* dist = nullptr) {
  SearchParams p;
  p.k = k;
  p.nprobe = nprobe;
  std::vector<VectorId> ids(k);
  std::vector<float> d(k);
  QueryStats stats;
  Status st = s.Search(std::span<const float>(q, kDim), p, ids, d, &stats);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (dist) *dist = d;
  return ids;
}

// Mean recall@10 of `dir`'s index over `queries` against brute force on
// `live` (squared L2).
double RecallAt10(const std::string& dir, const std::vector<float>& live,
                  const std::vector<float>& queries, std::uint32_t nprobe) {
  auto index = IvfIndex::Open(dir);
  EXPECT_TRUE(index.ok()) << index.status().ToString();
  auto s = (*index)->NewSearcher({});
  EXPECT_TRUE(s.ok());
  const std::size_t n = live.size() / kDim, nq = queries.size() / kDim;
  double hits = 0;
  for (std::size_t q = 0; q < nq; ++q) {
    std::vector<std::pair<float, VectorId>> all(n);
    for (std::size_t i = 0; i < n; ++i) {
      all[i] = {ivf::testing::L2(queries.data() + q * kDim, live.data() + i * kDim, kDim), i};
    }
    std::partial_sort(all.begin(), all.begin() + 10, all.end());
    std::set<VectorId> truth;
    for (int i = 0; i < 10; ++i) truth.insert(all[i].second);
    for (VectorId id : SearchOne(**s, queries.data() + q * kDim, 10, nprobe))
      hits += truth.count(id);
  }
  return hits / (10.0 * nq);
}

// `count` new rows, row i drawn around old row near(i) with unit Gaussian
// noise.
template <typename Near>
std::vector<float> RowsNear(const std::vector<float>& old_rows, std::size_t count, Near near,
                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> rows(count * kDim);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t from = near(i);
    for (std::size_t j = 0; j < kDim; ++j) rows[i * kDim + j] = old_rows[from * kDim + j] + g(rng);
  }
  return rows;
}

// The old rows' vectors, as a merge reads them back from the collection.
IvfRowReader ReaderOf(const std::vector<float>& old_rows) {
  return [&old_rows](std::span<const std::uint64_t> rows, float* out) {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::copy_n(old_rows.data() + rows[i] * kDim, kDim, out + i * kDim);
    }
    return Status::OK();
  };
}

std::vector<std::uint8_t> RandomDeletes(std::uint64_t n, double fraction, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::bernoulli_distribution b(fraction);
  std::vector<std::uint8_t> deleted(n);
  for (auto& x : deleted) x = b(rng) ? 1 : 0;
  return deleted;
}

TEST(IvfIndexMerge, RenumbersFindsEveryLiveRowAndKeepsRecall) {
  testutil::ScratchDir dir;
  const std::vector<float> all = ClusteredRows(kBase + 700, kDim, 30, 7);
  const std::vector<float> old_rows = Rows(all, 0, kBase);
  const std::vector<float> new_rows = Rows(all, kBase, 600);
  const std::vector<float> queries = Rows(all, kBase + 600, 100);
  Build(dir, old_rows, "old", Options());
  const std::vector<std::uint8_t> deleted = RandomDeletes(kBase, 0.05, 3);
  IvfMergeReport mr;
  const IvfRowReader reader = ReaderOf(old_rows);
  auto r =
      MergeIvfIndex(dir.File("old"), deleted, new_rows, dir.File("merged"), Options(), &mr, reader);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::vector<float> live = LiveRows(old_rows, deleted, new_rows);
  const std::uint64_t n = live.size() / kDim;
  EXPECT_EQ(r->num_vectors, n);
  EXPECT_EQ(mr.rows_inserted, 600u);
  EXPECT_EQ(mr.rows_deleted + n - 600, kBase);
  // (k-means over 30 blobs into 20 clusters may leave a cluster near twice
  // the target already: the merge may split it.)
  EXPECT_EQ(mr.clusters, kClusters - mr.clusters_split + mr.clusters_from_splits);
  EXPECT_GT(mr.clusters_rewritten, 0u);
  // Every cluster changed, but only those that split or gained more than a
  // quarter of their survivors are re-ordered from their full vectors.
  EXPECT_LT(mr.rows_read, n - 600);

  auto m = format::ReadManifest(dir.File("merged"));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->num_vectors, n);
  EXPECT_EQ(m->build.value("merged_from", std::string()), dir.File("old"));
  EXPECT_EQ(m->build.value("clusters_rewritten", std::uint64_t{0}), mr.clusters_rewritten);
  EXPECT_EQ(m->parameters.value("target_cluster_size", std::uint64_t{0}), kBase / kClusters);

  // Every live row, searched for itself with every cluster probed, comes
  // back under its merged row id; a deleted row's vector finds nothing at
  // distance 0.
  auto index = IvfIndex::Open(dir.File("merged"));
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->num_vectors(), n);
  auto s = (*index)->NewSearcher({});
  ASSERT_TRUE(s.ok());
  const auto C = static_cast<std::uint32_t>(mr.clusters);
  for (std::uint64_t row = 0; row < n; ++row) {
    const std::vector<VectorId> got = SearchOne(**s, live.data() + row * kDim, 3, C);
    ASSERT_NE(std::find(got.begin(), got.end(), row), got.end()) << "row " << row;
  }
  for (std::uint64_t r0 = 0; r0 < kBase; ++r0) {
    if (!deleted[r0]) continue;
    std::vector<float> dist;
    SearchOne(**s, old_rows.data() + r0 * kDim, 1, C, &dist);
    EXPECT_GT(dist[0], 1e-4f) << "deleted row " << r0 << " came back";
  }

  // Recall at one probed cluster (where the clustering shows most) within 2
  // points of a fresh build of the same live set (same numbering).
  Build(dir, live, "fresh", Options());
  const double merged = RecallAt10(dir.File("merged"), live, queries, 1);
  const double fresh = RecallAt10(dir.File("fresh"), live, queries, 1);
  EXPECT_GE(merged, fresh - 0.02) << "merged " << merged << " fresh " << fresh;
}

TEST(IvfIndexMerge, CosineAndRawRowsAreFindable) {
  for (const char* rerank : {"excode", "raw"}) {
    testutil::ScratchDir dir;
    const std::vector<float> all = ClusteredRows(kBase + 300, kDim, 30, 11);
    const std::vector<float> old_rows = Rows(all, 0, kBase);
    std::vector<float> new_rows = Rows(all, kBase, 300);
    for (float& x : new_rows) x *= 3.0f;  // not unit length: the merge normalises
    Build(dir, old_rows, "old", Options(Metric::kCosine, rerank));
    const std::vector<std::uint8_t> deleted = RandomDeletes(kBase, 0.1, 5);
    IvfMergeReport mr;
    auto r = MergeIvfIndex(dir.File("old"), deleted, new_rows, dir.File("merged"),
                           Options(Metric::kCosine, rerank), &mr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(mr.rows_read, 0u);
    auto index = IvfIndex::Open(dir.File("merged"));
    ASSERT_TRUE(index.ok());
    auto s = (*index)->NewSearcher({});
    ASSERT_TRUE(s.ok());
    const std::uint64_t survivors = r->num_vectors - 300;
    for (std::uint64_t i = 0; i < 300; ++i) {
      const std::vector<VectorId> got =
          SearchOne(**s, new_rows.data() + i * kDim, 3, static_cast<std::uint32_t>(mr.clusters));
      EXPECT_NE(std::find(got.begin(), got.end(), survivors + i), got.end()) << rerank << " " << i;
    }
  }
}

// A third of the data arrives at one spot: its cluster passes twice the
// target and is split until no part does.
TEST(IvfIndexMerge, OversizeClusterSplits) {
  for (const char* rerank : {"raw", "excode"}) {
    testutil::ScratchDir dir;
    const std::vector<float> old_rows = ClusteredRows(kBase, kDim, 30, 13);
    const std::vector<float> new_rows =
        RowsNear(old_rows, 2000, [](std::size_t) { return std::size_t{0}; }, 17);
    Build(dir, old_rows, "old", Options(Metric::kL2, rerank));
    const std::vector<std::uint8_t> none(kBase, 0);
    const IvfRowReader reader = ReaderOf(old_rows);
    IvfMergeReport mr;
    auto r = MergeIvfIndex(dir.File("old"), none, new_rows, dir.File("merged"),
                           Options(Metric::kL2, rerank), &mr, reader);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_GE(mr.clusters_split, 1u) << rerank;
    EXPECT_GT(mr.clusters, kClusters);
    EXPECT_EQ(mr.clusters, kClusters - mr.clusters_split + mr.clusters_from_splits);
    format::Manifest m;
    search::IvfIndexData data;
    ASSERT_TRUE(LoadIvfIndexData(dir.File("merged"), true, &m, &data).ok());
    ASSERT_EQ(data.num_clusters(), mr.clusters);
    for (std::size_t c = 0; c < data.num_clusters(); ++c) {
      EXPECT_LE(data.cluster_offsets[c + 1] - data.cluster_offsets[c], 2 * mr.target_cluster_size);
    }
    auto index = IvfIndex::Open(dir.File("merged"));
    ASSERT_TRUE(index.ok());
    auto s = (*index)->NewSearcher({});
    ASSERT_TRUE(s.ok());
    for (std::uint64_t i = 0; i < 2000; i += 7) {
      const std::vector<VectorId> got =
          SearchOne(**s, new_rows.data() + i * kDim, 3, static_cast<std::uint32_t>(mr.clusters));
      EXPECT_NE(std::find(got.begin(), got.end(), kBase + i), got.end()) << rerank << " " << i;
    }
    if (std::string(rerank) == "excode") {
      // Without the old rows' vectors an excode index cannot split.
      IvfMergeReport no_reader;
      auto r2 = MergeIvfIndex(dir.File("old"), none, new_rows, dir.File("merged2"),
                              Options(Metric::kL2, rerank), &no_reader);
      ASSERT_TRUE(r2.ok()) << r2.status().ToString();
      EXPECT_GE(no_reader.splits_skipped, 1u);
      EXPECT_EQ(no_reader.clusters, kClusters);
    }
  }
}

// Reads cluster c's records (payload bytes of its units).
std::vector<std::uint8_t> ClusterRecords(const search::IvfIndexData& d, std::size_t c) {
  const auto& f = d.records;
  std::vector<std::uint8_t> out;
  AlignedBuffer unit(f.UnitBytes());
  std::vector<std::uint8_t> scratch(f.packing().record_bytes());
  const std::uint64_t n = d.cluster_offsets[c + 1] - d.cluster_offsets[c];
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t u = f.first_unit()[c] + i / f.packing().records_per_unit();
    EXPECT_TRUE(f.ReadUnit(u, {unit.data(), f.UnitBytes()}).ok());
    const std::uint8_t* rec = f.packing().Gather(
        unit.as<std::uint8_t>(), static_cast<std::uint32_t>(i % f.packing().records_per_unit()),
        format::kSector, scratch.data());
    out.insert(out.end(), rec, rec + f.packing().record_bytes());
  }
  return out;
}

TEST(IvfIndexMerge, UntouchedClustersAreCopiedByteForByte) {
  testutil::ScratchDir dir;
  const std::vector<float> old_rows = ClusteredRows(kBase, kDim, 30, 19);
  Build(dir, old_rows, "old", Options());
  format::Manifest om;
  search::IvfIndexData old;
  ASSERT_TRUE(LoadIvfIndexData(dir.File("old"), true, &om, &old).ok());
  // Delete the first 5 rows of old cluster 0, insert 5 copies of cluster 1's
  // first member: clusters 0 and 1 change, the others do not.
  std::vector<std::uint8_t> deleted(kBase, 0);
  for (std::uint64_t p = old.cluster_offsets[0]; p < old.cluster_offsets[0] + 5; ++p) {
    deleted[old.ids[p]] = 1;
  }
  const std::uint32_t probe_row = old.ids[old.cluster_offsets[1]];
  std::vector<float> new_rows;
  for (int i = 0; i < 5; ++i) {
    new_rows.insert(new_rows.end(), old_rows.begin() + probe_row * kDim,
                    old_rows.begin() + (probe_row + 1) * kDim);
  }
  IvfMergeReport mr;
  auto r = MergeIvfIndex(dir.File("old"), deleted, new_rows, dir.File("merged"), Options(), &mr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(mr.clusters_rewritten, 2u);
  EXPECT_EQ(mr.clusters_copied, kClusters - 2);
  EXPECT_EQ(mr.clusters, kClusters);
  format::Manifest nm;
  search::IvfIndexData merged;
  ASSERT_TRUE(LoadIvfIndexData(dir.File("merged"), true, &nm, &merged).ok());
  std::vector<std::uint32_t> new_row_of(kBase);
  std::uint32_t next = 0;
  for (std::uint64_t row = 0; row < kBase; ++row) new_row_of[row] = deleted[row] ? ~0u : next++;
  const std::size_t bb = old.quantizer->layout().ram_batch_bytes();
  for (std::size_t c = 2; c < kClusters; ++c) {
    ASSERT_EQ(merged.cluster_offsets[c + 1] - merged.cluster_offsets[c],
              old.cluster_offsets[c + 1] - old.cluster_offsets[c]);
    EXPECT_EQ(ClusterRecords(merged, c), ClusterRecords(old, c)) << "cluster " << c;
    EXPECT_TRUE(std::equal(old.ram_blocks.begin() + old.block_offsets[c] * bb,
                           old.ram_blocks.begin() + old.block_offsets[c + 1] * bb,
                           merged.ram_blocks.begin() + merged.block_offsets[c] * bb))
        << "cluster " << c;
    for (std::uint64_t i = 0; i < old.cluster_offsets[c + 1] - old.cluster_offsets[c]; ++i) {
      EXPECT_EQ(merged.ids[merged.cluster_offsets[c] + i],
                new_row_of[old.ids[old.cluster_offsets[c] + i]]);
    }
  }
  EXPECT_EQ(merged.cluster_offsets[1] - merged.cluster_offsets[0],
            old.cluster_offsets[1] - old.cluster_offsets[0] - 5);
  EXPECT_EQ(merged.cluster_offsets[2] - merged.cluster_offsets[1],
            old.cluster_offsets[2] - old.cluster_offsets[1] + 5);
}

// Every listed code (the 2-bit filter codes) of a merged index is its row's
// own code against its cluster's centroid, whether the cluster was copied,
// rewritten or split; an index without them merges into one without them.
TEST(IvfIndexMerge, FilterCodesFollowTheirRows) {
  testutil::ScratchDir dir;
  const std::vector<float> old_rows = ClusteredRows(kBase, kDim, 30, 23);
  // Most near one old row (a cluster that splits), the rest anywhere.
  const std::vector<float> new_rows = RowsNear(
      old_rows, 1500, [](std::size_t i) { return i < 900 ? std::size_t{0} : (i * 37) % kBase; }, 29);
  IvfBuildOptions with = Options();
  with.filter_codes = true;
  Build(dir, old_rows, "old", with);
  Build(dir, old_rows, "plain", Options());
  const std::vector<std::uint8_t> deleted = RandomDeletes(kBase, 0.1, 31);
  const IvfRowReader reader = ReaderOf(old_rows);
  IvfMergeReport mr;
  // The merge follows the old index, whatever the options say.
  auto r = MergeIvfIndex(dir.File("old"), deleted, new_rows, dir.File("merged"), Options(), &mr,
                         reader);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(mr.clusters_split, 1u);
  EXPECT_GE(mr.clusters_rewritten, 1u);
  auto plain = MergeIvfIndex(dir.File("plain"), deleted, new_rows, dir.File("plain_merged"), with,
                             nullptr, reader);
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  format::Manifest pm;
  search::IvfIndexData plain_data;
  ASSERT_TRUE(LoadIvfIndexData(dir.File("plain_merged"), true, &pm, &plain_data).ok());
  EXPECT_TRUE(plain_data.listed_codes.empty());
  EXPECT_FALSE(pm.parameters.at("filter_codes").get<bool>());

  format::Manifest m;
  search::IvfIndexData data;
  ASSERT_TRUE(LoadIvfIndexData(dir.File("merged"), true, &m, &data).ok());
  EXPECT_TRUE(m.parameters.at("filter_codes").get<bool>());
  const auto& qz = *data.quantizer;
  const std::size_t lb = qz.layout().listed_code_bytes();
  ASSERT_EQ(data.listed_codes.size(), data.num_vectors() * lb);
  const std::vector<float> live = LiveRows(old_rows, deleted, new_rows);
  std::vector<float> rc(qz.padded_dim());
  std::vector<std::uint8_t> want(lb);
  quant::rabitq::RabitqCode code;
  std::size_t mismatched = 0;
  for (std::size_t c = 0; c < data.num_clusters(); ++c) {
    qz.RotateCentroid(data.centroids.data() + c * kDim, rc.data());
    for (std::uint64_t pos = data.cluster_offsets[c]; pos < data.cluster_offsets[c + 1]; ++pos) {
      ASSERT_TRUE(qz.Encode(live.data() + std::size_t{data.ids[pos]} * kDim, rc.data(), &code,
                            want.data())
                      .ok());
      mismatched += std::equal(want.begin(), want.end(), data.listed_codes.begin() + pos * lb) ? 0 : 1;
    }
  }
  EXPECT_EQ(mismatched, 0u) << "of " << data.num_vectors();
}

TEST(IvfIndexMerge, FailedMergeLeavesTheOldIndex) {
  testutil::ScratchDir dir;
  const std::vector<float> old_rows = ClusteredRows(kBase, kDim, 30, 23);
  Build(dir, old_rows, "old", Options());
  const auto before = format::ReadManifest(dir.File("old"));
  ASSERT_TRUE(before.ok());
  std::vector<float> bad_rows = Rows(old_rows, 0, 10);
  bad_rows[5 * kDim + 3] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::uint8_t> deleted = RandomDeletes(kBase, 0.05, 29);
  // Late failures, into the old index's own directory: a non-finite new row
  // (found while encoding) and a reader error.
  auto r = MergeIvfIndex(dir.File("old"), deleted, bad_rows, dir.File("old"), Options());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().ToString();
  auto failing = [](std::span<const std::uint64_t>, float*) {
    return Status::IOError("disk gone");
  };
  // (Half as many new rows again: clusters re-order, so the reader is asked.)
  r = MergeIvfIndex(dir.File("old"), deleted, Rows(old_rows, 0, kBase / 2), dir.File("old"),
                    Options(), nullptr, failing);
  EXPECT_EQ(r.status().code(), StatusCode::kIOError) << r.status().ToString();
  const auto after = format::ReadManifest(dir.File("old"));
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->num_vectors, kBase);
  EXPECT_EQ(after->files[0].checksum, before->files[0].checksum);
  EXPECT_EQ(after->files[1].checksum, before->files[1].checksum);
  auto index = IvfIndex::Open(dir.File("old"), {.verify_checksums = true});
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    EXPECT_EQ(e.path().filename().string().find("staging"), std::string::npos) << e.path();
  }
}

TEST(IvfIndexMerge, BadInputIsInvalidArgument) {
  testutil::ScratchDir dir;
  const std::vector<float> old_rows = ClusteredRows(kBase, kDim, 30, 31);
  Build(dir, old_rows, "old", Options());
  const std::vector<std::uint8_t> none(kBase, 0);
  const std::vector<float> ragged(kDim + 1, 1.0f);
  EXPECT_EQ(MergeIvfIndex(dir.File("old"), none, ragged, dir.File("m"), Options()).status().code(),
            StatusCode::kInvalidArgument);
  const std::vector<std::uint8_t> short_flags(kBase - 1, 0);
  EXPECT_EQ(
      MergeIvfIndex(dir.File("old"), short_flags, {}, dir.File("m"), Options()).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(MergeIvfIndex(dir.File("old"), none, {}, dir.File("m"), Options(Metric::kInnerProduct))
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  const std::vector<std::uint8_t> all(kBase, 1);
  EXPECT_EQ(MergeIvfIndex(dir.File("old"), all, {}, dir.File("m"), Options()).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(dir.File("m")));
}

}  // namespace
}  // namespace strata
