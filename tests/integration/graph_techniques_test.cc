// The graph index's I/O techniques (issue #6) as switches: every build-time
// layout (packed, page-shuffled, all-in-storage, OPQ codes, MemGraph) and
// every search-time switch (MemGraph entry, page search, dynamic width,
// pipeline) returns valid results at high recall; the page shuffle keeps the
// graph exactly; all-in-storage records carry the same neighbours and codes as
// the packed layout and the PQ file.
#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/aligned_buffer.h"
#include "format/blob_file.h"
#include "format/graph_node_file.h"
#include "quant/pq/product_quantizer.h"
#include "scratch_dir.h"
#include "synthetic_dataset.h"
#include "strata/dataset.h"
#include "strata/eval.h"
#include "strata/graph_index.h"

namespace strata {
namespace {

constexpr std::uint64_t kRows = 6000;
constexpr std::uint32_t kDim = 32;

class GraphTechniques : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testutil::ScratchDir();
    testutil::TestDataset data =
        testutil::MakeTestDataset(*dir_, Metric::kL2, ElementType::kFloat32, kRows, kDim, 150, 5);
    base_ = data.base;
    queries_ = data.queries;
    gt_ = new GroundTruth(std::move(data.gt));
    // One thread: the graph is deterministic, so every layout holds the same graph.
    GraphBuildOptions b;
    b.R = 24;
    b.L = 48;
    b.pq_bytes = 8;
    b.threads = 1;
    ASSERT_TRUE(BuildGraphIndex(base_, Dir("packed"), b).ok());
    b.page_shuffle = true;
    b.mem_graph_ratio = 0.03;
    ASSERT_TRUE(BuildGraphIndex(base_, Dir("shuffled"), b).ok());
    GraphBuildOptions a = b;
    a.page_shuffle = false;
    a.mem_graph_ratio = 0.0;
    a.all_in_storage = true;
    ASSERT_TRUE(BuildGraphIndex(base_, Dir("ais"), a).ok());
    GraphBuildOptions d;
    d.R = 24;
    d.L = 48;
    d.pq_bytes = 8;
    d.threads = 2;
    ASSERT_TRUE(ApplyBuildProfile("default", &d).ok());
    d.opq_iterations = 5;
    auto report = BuildGraphIndex(base_, Dir("default"), d);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    // The shuffle packs graph neighbours into pages: the overlap ratio rises.
    EXPECT_GT(report->overlap_after, report->overlap_before + 0.05);
    EXPECT_GT(report->mem_graph_nodes, 0u);
  }
  static void TearDownTestSuite() {
    delete gt_;
    delete dir_;
  }
  static std::string Dir(const std::string& name) { return dir_->File(name); }

  // Recall@10 at L 48 with `params`' switches; checks ids are valid and distinct.
  static double Recall(const std::string& index_name, SearchParams params,
                       const OpenOptions& open = {}, double* pages = nullptr) {
    auto index = Index::Open(Dir(index_name), open);
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    auto q = ReadVectorsAsFloat(queries_);
    EXPECT_TRUE(q.ok());
    params.k = 10;
    params.list_size = 48;
    auto r = SearchBatch(**index, *q, params, 2);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    for (std::uint64_t i = 0; i < r->results.num_queries; ++i) {
      std::set<VectorId> seen;
      for (std::uint32_t j = 0; j < 10; ++j) {
        const VectorId id = r->results.ids[i * 10 + j];
        EXPECT_LT(id, kRows);
        EXPECT_TRUE(seen.insert(id).second);
      }
    }
    if (pages) *pages = Summarize(r->stats, r->seconds).mean_pages_read;
    auto rec = ComputeRecall(r->results, *gt_, 10);
    EXPECT_TRUE(rec.ok());
    return rec->mean_recall;
  }

  static testutil::ScratchDir* dir_;
  static std::string base_, queries_;
  static GroundTruth* gt_;
};

testutil::ScratchDir* GraphTechniques::dir_ = nullptr;
std::string GraphTechniques::base_;
std::string GraphTechniques::queries_;
GroundTruth* GraphTechniques::gt_ = nullptr;

SearchParams Switches(bool mem_graph, bool page_search, bool dynamic_width, bool pipelined) {
  SearchParams p;
  p.mem_graph = mem_graph;
  p.page_search = page_search;
  p.dynamic_width = dynamic_width;
  p.pipelined = pipelined;
  return p;
}

TEST_F(GraphTechniques, EverySwitchKeepsRecallOnEveryLayout) {
  for (const char* index : {"packed", "shuffled", "ais", "default"}) {
    // None, each switch alone, C5 (MemGraph + page search + dynamic width), all.
    for (int mask : {0, 1, 2, 4, 8, 7, 15}) {
      const SearchParams p = Switches(mask & 1, mask & 2, mask & 4, mask & 8);
      const double recall = Recall(index, p);
      EXPECT_GE(recall, 0.85) << index << " switches " << mask;
    }
  }
  // The baseline and default profiles by name.
  SearchParams base;
  ASSERT_TRUE(ApplySearchProfile("baseline", &base).ok());
  EXPECT_FALSE(base.mem_graph || base.page_search || base.dynamic_width || base.pipelined);
  EXPECT_GE(Recall("default", base), 0.85);
  EXPECT_TRUE(ApplySearchProfile("fastest", &base).IsInvalidArgument());
}

TEST_F(GraphTechniques, ResultsDoNotDependOnThreadsOrCodePlacement) {
  // All-in-storage reads neighbours' codes from the records; with resident
  // codes they come from RAM: the same codes, so the same results.
  auto q = ReadVectorsAsFloat(queries_);
  ASSERT_TRUE(q.ok());
  SearchParams p;
  p.list_size = 40;
  auto ssd = Index::Open(Dir("ais"));
  auto ram = Index::Open(Dir("ais"), {.resident_codes = true});
  ASSERT_TRUE(ssd.ok() && ram.ok());
  EXPECT_LT((*ssd)->memory_bytes() + kRows * 8 / 2, (*ram)->memory_bytes());
  auto a = SearchBatch(**ssd, *q, p, 1);
  auto b = SearchBatch(**ram, *q, p, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->results.ids, b->results.ids);
  // The default composition on the shuffled index: identical across threads.
  auto s = Index::Open(Dir("default"));
  ASSERT_TRUE(s.ok());
  auto c = SearchBatch(**s, *q, p, 1);
  auto d = SearchBatch(**s, *q, p, 2);
  ASSERT_TRUE(c.ok() && d.ok());
  EXPECT_EQ(c->results.ids, d->results.ids);
  EXPECT_EQ(c->results.distances, d->results.distances);
  // Node caches serve reads from RAM without changing results (with page
  // search off: a cached node is expanded alone, without its page's mates).
  p.page_search = false;
  auto plain = SearchBatch(**s, *q, p, 2);
  ASSERT_TRUE(plain.ok());
  for (CachePolicy policy : {CachePolicy::kBfs, CachePolicy::kFrequency}) {
    OpenOptions o;
    o.cache_policy = policy;
    o.cache_mib = 1;  // 1 MiB of records
    o.cache_warmup_queries = 50;
    auto cached = Index::Open(Dir("default"), o);
    ASSERT_TRUE(cached.ok()) << cached.status().ToString();
    EXPECT_GT((*cached)->cached_nodes(), 100u);
    auto e = SearchBatch(**cached, *q, p, 2);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->results.ids, plain->results.ids);
    std::uint64_t hits = 0;
    for (const QueryStats& st : e->stats) hits += st.cache_hits;
    EXPECT_GT(hits, 0u);
  }
}

TEST_F(GraphTechniques, PageSearchOnShuffledPagesReadsFewerPages) {
  double base_pages = 0, c1_pages = 0;
  Recall("packed", Switches(false, false, false, false), {}, &base_pages);
  Recall("shuffled", Switches(false, true, false, false), {}, &c1_pages);
  EXPECT_LT(c1_pages, base_pages);
}

// Every record of a node file, by external row: vector bytes, neighbour rows,
// inline codes.
struct Node {
  std::vector<std::byte> vector;
  std::vector<VectorId> neighbours;  // slots
  std::vector<std::uint8_t> codes;
};
std::map<VectorId, Node> ReadNodes(const std::string& dir, std::vector<VectorId>* row_of_slot) {
  auto file = format::GraphNodeFile::Open(dir + "/graph.nodes");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  const format::GraphLayout& l = file->layout();
  AlignedBuffer buf(l.data_sectors() * format::kSector);
  std::span<std::byte> all(buf.data(), buf.size());
  EXPECT_TRUE(file->ReadSectors(1, l.data_sectors(), all).ok());
  std::map<VectorId, Node> nodes;
  row_of_slot->assign(l.num_slots, kInvalidVectorId);
  std::vector<std::byte> scratch;
  for (std::uint64_t s = 0; s < l.num_slots; ++s) {
    const format::RecordLocation loc = l.Locate(s);
    format::NodeRecordView v;
    EXPECT_TRUE(file->Decode(s, loc, all.subspan((loc.sector - 1) * format::kSector,
                                                  loc.sectors * format::kSector),
                             &scratch, &v)
                    .ok());
    (*row_of_slot)[s] = v.external_id;
    if (v.external_id == kInvalidVectorId) continue;
    Node& n = nodes[v.external_id];
    n.vector.assign(v.vector.begin(), v.vector.end());
    for (std::uint32_t j = 0; j < v.degree; ++j) n.neighbours.push_back(v.neighbour(j));
    if (v.codes) n.codes.assign(v.codes, v.codes + v.degree * l.code_bytes);
  }
  return nodes;
}

TEST_F(GraphTechniques, ShufflePreservesTheGraphExactly) {
  std::vector<VectorId> packed_rows, shuffled_rows;
  auto packed = ReadNodes(Dir("packed"), &packed_rows);
  auto shuffled = ReadNodes(Dir("shuffled"), &shuffled_rows);
  ASSERT_EQ(packed.size(), kRows);
  ASSERT_EQ(shuffled.size(), kRows);
  std::size_t moved = 0;
  for (std::uint64_t s = 0; s < shuffled_rows.size(); ++s) {
    moved += shuffled_rows[s] != s;
  }
  EXPECT_GT(moved, kRows / 2);  // the order really changed
  for (const auto& [row, node] : packed) {
    const Node& other = shuffled.at(row);
    ASSERT_EQ(node.vector, other.vector) << row;
    std::vector<VectorId> a = node.neighbours, b;
    for (VectorId slot : other.neighbours) b.push_back(shuffled_rows.at(slot));
    ASSERT_EQ(a, b) << "row " << row;  // same neighbours, same order
  }
}

TEST_F(GraphTechniques, AllInStorageRecordsMatchPackedAndPqFile) {
  std::vector<VectorId> packed_rows, ais_rows;
  auto packed = ReadNodes(Dir("packed"), &packed_rows);
  auto ais = ReadNodes(Dir("ais"), &ais_rows);
  auto blob = format::ReadBlobFile(Dir("ais") + "/pq.bin", format::BlobKind::kPqCodes, 1, 2);
  ASSERT_TRUE(blob.ok());
  const std::vector<std::uint8_t>& codes = blob->sections[1];
  const std::size_t m = codes.size() / kRows;
  ASSERT_EQ(m, 8u);
  for (const auto& [row, node] : packed) {
    const Node& other = ais.at(row);
    ASSERT_EQ(node.neighbours, other.neighbours);
    ASSERT_EQ(other.codes.size(), node.neighbours.size() * m);
    for (std::size_t j = 0; j < node.neighbours.size(); ++j) {
      ASSERT_EQ(std::memcmp(other.codes.data() + j * m, codes.data() + node.neighbours[j] * m, m),
                0);
    }
  }
}

}  // namespace
}  // namespace strata

namespace strata {
namespace {

// Accepts the rows r with r % kModulus == residue.
class ResidueFilter : public IdFilter {
 public:
  static constexpr std::uint64_t kModulus = 50;
  explicit ResidueFilter(std::uint64_t residue) : residue_(residue) {}
  bool Accept(std::uint64_t id) const override { return id % kModulus == residue_; }

 private:
  std::uint64_t residue_;
};

// SearchParams::restrict_to (the exact-scan fallback of filtered search):
// with codes in RAM, on packed and page-shuffled layouts alike, the search
// ranks only the given rows and re-ranks the best L exactly: recall against
// the filtered brute force is near 1 where a walk through a graph 2 % of
// whose nodes pass is not; without resident codes the hint is ignored and
// the filtered walk runs (results still pass the filter).
TEST_F(GraphTechniques, RestrictedSearchRanksOnlyTheGivenRows) {
  auto base = ReadVectorsAsFloat(base_);
  auto q = ReadVectorsAsFloat(queries_);
  ASSERT_TRUE(base.ok() && q.ok());
  const std::size_t nq = q->rows();
  std::vector<ResidueFilter> filters;
  std::vector<std::vector<std::uint64_t>> rows(nq);
  std::vector<std::set<VectorId>> truth(nq);
  const std::span<const float> bv = base->values<float>(), qv = q->values<float>();
  for (std::size_t i = 0; i < nq; ++i) {
    filters.emplace_back(i % ResidueFilter::kModulus);
    std::vector<std::pair<float, VectorId>> d;
    for (std::uint64_t r = i % ResidueFilter::kModulus; r < kRows; r += ResidueFilter::kModulus) {
      rows[i].push_back(r);
      float s = 0;
      for (std::uint32_t j = 0; j < kDim; ++j) {
        const float x = qv[i * kDim + j] - bv[r * kDim + j];
        s += x * x;
      }
      d.emplace_back(s, r);
    }
    std::sort(d.begin(), d.end());
    for (int j = 0; j < 10; ++j) truth[i].insert(d[j].second);
  }
  for (const char* name : {"packed", "shuffled", "default", "ais"}) {
    SCOPED_TRACE(name);
    auto index = Index::Open(Dir(name), {});
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ((*index)->ranks_restricted(), std::string(name) != "ais");
    // Modes: the filtered walk; the walk started also from a sample of the
    // passing rows (entry_rows); the exact scan reading all of the best L;
    // the exact scan stopping on convergence (exact_scan_patience).
    std::vector<std::vector<std::uint64_t>> samples(nq);
    for (std::size_t i = 0; i < nq; ++i) samples[i] = SampleEntryRows(rows[i]);
    double walk_recall = 0, all_l_pages = 0;
    for (const char* mode : {"walk", "walk+entry", "scan-all", "scan-converge"}) {
      const std::string m = mode;
      SearchParams p;
      p.k = 10;
      p.list_size = 48;
      p.exact_scan_patience = m == "scan-all" ? 0 : 16;
      auto r = SearchBatch(**index, *q, p, 2, [&](std::size_t i, SearchParams* qp) {
        qp->filter = &filters[i];
        if (m == "walk+entry") qp->entry_rows = &samples[i];
        if (m.rfind("scan", 0) == 0) qp->restrict_to = &rows[i];
      });
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      double hits = 0;
      for (std::size_t i = 0; i < nq; ++i) {
        for (std::uint32_t j = 0; j < 10; ++j) {
          const VectorId id = r->results.ids[i * 10 + j];
          if (id == kInvalidVectorId) continue;
          EXPECT_TRUE(filters[i].Accept(id)) << "query " << i << " id " << id;
          hits += truth[i].count(id);
        }
      }
      const double recall = hits / (10.0 * nq);
      const double pages = Summarize(r->stats, r->seconds).mean_pages_read;
      const bool restricted = m.rfind("scan", 0) == 0 && (*index)->ranks_restricted();
      if (restricted) {
        EXPECT_GE(recall, 0.97) << "pages " << pages;
        EXPECT_LE(pages, 4 * 48.0);  // the best L records (and their pages), no walk
      }
      if (m == "walk") walk_recall = recall;
      if (m == "walk+entry" && (*index)->ranks_restricted()) {
        // Starting among passing points finds more of them at the same L.
        EXPECT_GE(recall, walk_recall) << "pages " << pages;
      }
      if (m == "scan-all") all_l_pages = pages;
      if (m == "scan-converge" && restricted) {
        EXPECT_LT(pages, all_l_pages);
      }
      std::printf("%s %s recall %.3f pages %.1f\n", name, mode, recall, pages);
    }
  }
}

}  // namespace
}  // namespace strata
