// MergeIvfIndex: old IVF index + deletes + inserts -> a new IVF index with
// the old quantizer and centroids, rewriting only the clusters that changed
// (the plan is at the top of ivf_index_merge.h).
#include "index/ivf_index_merge.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/parallel.h"
#include "base/timer.h"
#include "format/manifest.h"
#include "index/build_util.h"
#include "index/ivf_files.h"
#include "index/ivf_index_write.h"
#include "ivf/clustering.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/kmeans.h"
#include "quant/pq/nearest.h"
#include "search/ivf_index_data.h"

namespace strata {
namespace {

using quant::rabitq::kBatchSize;
using quant::rabitq::RabitqCode;

// Units per read when an old cluster's records are loaded (1 MiB at one
// page per unit): large sequential O_DIRECT reads, bounded buffers.
constexpr std::uint64_t kUnitsPerRead = 256;

// One cluster of the new index.
struct Piece {
  std::vector<float> centroid;           // dim floats
  std::vector<std::uint32_t> ids;        // new row ids in storage order
  std::vector<std::uint8_t> ram_blocks;  // ceil(size / 32) RAM batch blocks
  std::vector<std::uint8_t> records;     // size x record_bytes
  std::vector<std::uint8_t> listed_codes;  // size x listed_bytes
};

enum class Fate : std::uint8_t { kCopy, kRewrite, kSplit, kDrop };

// An old cluster and what becomes of it.
struct OldCluster {
  std::vector<std::uint64_t> survivors;  // old storage positions, in storage order
  std::vector<std::uint32_t> inserted;   // indices into new_rows, ascending
  Fate fate = Fate::kCopy;
  bool fetched = false;          // survivors' vectors are in the prefetched buffer ...
  std::uint64_t fetched_at = 0;  // ... from this row of it on
  bool split_skipped = false;
  std::vector<Piece> pieces;
};

// What every cluster's rewrite reads (shared, read-only).
struct MergeInputs {
  const search::IvfIndexData* old = nullptr;
  std::size_t dim = 0;
  std::size_t record_bytes = 0;
  std::size_t block_bytes = 0;
  std::size_t listed_bytes = 0;  // 0: the old index has no listed codes, nor will the new
  bool raw = false;
  std::size_t page_group = 0;             // records per page under locality, else 0
  std::vector<std::uint32_t> new_row_of;  // old row -> new row (unused for deleted rows)
  std::uint64_t survivors = 0;            // new rows [0, survivors) are old rows
  const float* new_values = nullptr;      // inserted rows, normalised under cosine
  const float* fetched = nullptr;         // read_old_rows' vectors, normalised under cosine
  std::uint64_t split_limit = 0;          // 2 x target
  std::uint64_t seed = 0;
};

// Records of old cluster c in storage order (size x record_bytes), read in
// large sequential chunks and checked sector by sector.
Status ReadClusterRecords(const search::IvfIndexData& old, std::size_t c,
                          std::vector<std::uint8_t>* out) {
  const format::IvfRecordsFile& f = old.records;
  const ivf::PagePacking& pk = f.packing();
  const std::uint64_t n = old.cluster_offsets[c + 1] - old.cluster_offsets[c];
  const std::uint64_t first = f.first_unit()[c];
  const std::uint64_t units = f.first_unit()[c + 1] - first;
  out->resize(n * pk.record_bytes());
  const std::size_t unit_bytes = f.UnitBytes();
  AlignedBuffer buffer(std::min(units, kUnitsPerRead) * unit_bytes);
  if (units > 0 && buffer.empty()) return Status::IOError("ivf merge: out of memory");
  std::vector<std::uint8_t> scratch(pk.record_bytes());
  for (std::uint64_t u0 = 0; u0 < units; u0 += kUnitsPerRead) {
    const std::uint64_t k = std::min(kUnitsPerRead, units - u0);
    std::span<std::byte> span(buffer.data(), k * unit_bytes);
    STRATA_RETURN_IF_ERROR(f.file().ReadAt(f.UnitOffset(first + u0), span));
    for (std::uint64_t u = 0; u < k; ++u) {
      STRATA_RETURN_IF_ERROR(f.VerifyUnit(first + u0 + u, span.subspan(u * unit_bytes)));
      const auto* unit = reinterpret_cast<const std::uint8_t*>(span.data() + u * unit_bytes);
      const std::uint64_t r0 = (u0 + u) * pk.records_per_unit();
      for (std::uint64_t r = r0; r < std::min(n, r0 + pk.records_per_unit()); ++r) {
        const std::uint8_t* rec =
            pk.Gather(unit, static_cast<std::uint32_t>(r - r0), format::kSector, scratch.data());
        std::memcpy(out->data() + r * pk.record_bytes(), rec, pk.record_bytes());
      }
    }
  }
  return Status::OK();
}

// Splits `members` (local indices into `vecs`, n x d) by recursive 2-means
// until every part holds at most `limit`, appending the parts depth-first
// (deterministic). A 2-means that leaves one side empty (duplicate vectors)
// falls back to halves, so the recursion always ends.
Status Bisect(const float* vecs, std::size_t d, std::vector<std::uint32_t> members,
              std::uint64_t limit, std::uint64_t seed,
              std::vector<std::vector<std::uint32_t>>* parts) {
  if (members.size() <= limit) {
    parts->push_back(std::move(members));
    return Status::OK();
  }
  std::vector<float> rows(members.size() * d);
  for (std::size_t i = 0; i < members.size(); ++i) {
    std::copy_n(vecs + static_cast<std::size_t>(members[i]) * d, d, rows.data() + i * d);
  }
  quant::KMeansOptions km;
  km.k = 2;
  km.iterations = 10;
  km.seed = seed;
  km.threads = 1;  // clusters are rewritten in parallel already
  STRATA_ASSIGN_OR_RETURN(quant::KMeansResult two,
                          quant::TrainKMeansOnRows(rows.data(), members.size(), d, km));
  std::vector<std::uint32_t> left, right;
  for (std::size_t i = 0; i < members.size(); ++i) {
    const float* x = rows.data() + i * d;
    const bool l = quant::SquaredL2(x, two.centroids.data(), d) <=
                   quant::SquaredL2(x, two.centroids.data() + d, d);
    (l ? left : right).push_back(members[i]);
  }
  if (left.empty() || right.empty()) {
    const auto half = static_cast<std::ptrdiff_t>(members.size() / 2);
    left.assign(members.begin(), members.begin() + half);
    right.assign(members.begin() + half, members.end());
  }
  STRATA_RETURN_IF_ERROR(Bisect(vecs, d, std::move(left), limit, seed * 2 + 1, parts));
  return Bisect(vecs, d, std::move(right), limit, seed * 2 + 2, parts);
}

// The new row id of local member l of a cluster (survivors first, then the
// inserted rows).
std::uint32_t NewRowOf(const MergeInputs& in, const OldCluster& oc, std::uint32_t l) {
  const std::size_t s = oc.survivors.size();
  return l < s ? in.new_row_of[in.old->ids[oc.survivors[l]]]
               : static_cast<std::uint32_t>(in.survivors + oc.inserted[l - s]);
}

// Split pieces: members by recursive 2-means, each piece ordered as a build
// orders a cluster and encoded against its own mean.
Status SplitCluster(const MergeInputs& in, std::size_t c, const std::vector<float>& vecs,
                    OldCluster* oc) {
  const std::size_t d = in.dim;
  const auto& qz = *in.old->quantizer;
  const std::size_t m = oc->survivors.size() + oc->inserted.size();
  std::vector<std::uint32_t> all(m);
  std::iota(all.begin(), all.end(), 0u);
  std::vector<std::vector<std::uint32_t>> parts;
  STRATA_RETURN_IF_ERROR(Bisect(vecs.data(), d, std::move(all), in.split_limit,
                                in.seed ^ (0x9E3779B97F4A7C15ull * (c + 1)), &parts));
  std::vector<float> dist(m);
  for (std::vector<std::uint32_t>& part : parts) {
    Piece p;
    p.centroid.assign(d, 0.0f);
    std::vector<double> sum(d, 0.0);
    for (std::uint32_t l : part) {
      for (std::size_t j = 0; j < d; ++j) sum[j] += vecs[std::size_t{l} * d + j];
    }
    for (std::size_t j = 0; j < d; ++j) p.centroid[j] = static_cast<float>(sum[j] / part.size());
    for (std::uint32_t l : part) {
      dist[l] = quant::SquaredL2(vecs.data() + std::size_t{l} * d, p.centroid.data(), d);
    }
    ivf::OrderClusterMembers(vecs.data(), d, dist.data(), part, in.page_group);
    std::vector<float> rows(part.size() * d);
    for (std::size_t i = 0; i < part.size(); ++i) {
      std::copy_n(vecs.data() + std::size_t{part[i]} * d, d, rows.data() + i * d);
      p.ids.push_back(NewRowOf(in, *oc, part[i]));
    }
    p.ram_blocks.resize((part.size() + kBatchSize - 1) / kBatchSize * in.block_bytes);
    p.records.resize(part.size() * in.record_bytes);
    p.listed_codes.resize(part.size() * in.listed_bytes);
    STRATA_RETURN_IF_ERROR(qz.EncodeCluster(
        rows.data(), part.size(), p.centroid.data(), p.ram_blocks.data(),
        in.raw ? nullptr : p.records.data(), 1,
        in.listed_bytes == 0 ? nullptr : p.listed_codes.data()));
    if (in.raw) std::memcpy(p.records.data(), rows.data(), p.records.size());
    oc->pieces.push_back(std::move(p));
  }
  return Status::OK();
}

// A rewritten cluster: same centroid, survivors' codes kept, the inserted
// rows encoded. `vecs` holds every member's vector when `have_vectors`, else
// only the inserted ones (at their local index).
Status RewriteCluster(const MergeInputs& in, std::size_t c, const std::vector<float>& vecs,
                      bool have_vectors, const std::vector<std::uint8_t>& old_records,
                      OldCluster* oc) {
  const search::IvfIndexData& old = *in.old;
  const auto& qz = *old.quantizer;
  const auto& layout = qz.layout();
  const std::size_t d = in.dim;
  const std::size_t s = oc->survivors.size();
  const std::size_t m = s + oc->inserted.size();
  Piece p;
  p.centroid.assign(old.centroids.begin() + static_cast<std::ptrdiff_t>(c * d),
                    old.centroids.begin() + static_cast<std::ptrdiff_t>((c + 1) * d));
  // Storage order: the build's over all members when their vectors are
  // known; otherwise the survivors keep theirs and the new rows follow.
  std::vector<float> dist(m, 0.0f);
  const std::size_t from = have_vectors ? 0 : s;
  for (std::size_t l = from; l < m; ++l) {
    dist[l] = quant::SquaredL2(vecs.data() + l * d, p.centroid.data(), d);
  }
  std::vector<std::uint32_t> order(m);
  std::iota(order.begin(), order.end(), 0u);
  ivf::OrderClusterMembers(vecs.data(), d, dist.data(),
                           std::span<std::uint32_t>(order).subspan(from), in.page_group);
  // Codes of the inserted rows against the unchanged centroid.
  std::vector<float> rotated_centroid(qz.padded_dim());
  qz.RotateCentroid(p.centroid.data(), rotated_centroid.data());
  std::vector<RabitqCode> fresh(m - s);
  const std::size_t lb = in.listed_bytes;
  std::vector<std::uint8_t> fresh_listed((m - s) * lb);
  for (std::size_t l = s; l < m; ++l) {
    STRATA_RETURN_IF_ERROR(qz.Encode(vecs.data() + l * d, rotated_centroid.data(), &fresh[l - s],
                                     lb == 0 ? nullptr : fresh_listed.data() + (l - s) * lb)
                               .WithContext("new row " + std::to_string(oc->inserted[l - s])));
  }
  // RAM blocks: survivors' slots unpacked from their old blocks and packed
  // again with the new ones at their new positions.
  const std::uint64_t first = old.cluster_offsets[c];
  const std::uint8_t* old_blocks = old.ram_blocks.data() + old.block_offsets[c] * in.block_bytes;
  p.ram_blocks.resize((m + kBatchSize - 1) / kBatchSize * in.block_bytes);
  p.records.resize(m * in.record_bytes);
  p.listed_codes.resize(m * lb);
  std::vector<RabitqCode> kept(kBatchSize);
  for (RabitqCode& k : kept) k.bits.assign(layout.code_bytes(), 0);
  const RabitqCode* slots[kBatchSize];
  for (std::size_t b = 0; b * kBatchSize < m; ++b) {
    std::fill(std::begin(slots), std::end(slots), nullptr);
    for (std::size_t j = 0; j < kBatchSize && b * kBatchSize + j < m; ++j) {
      const std::uint32_t l = order[b * kBatchSize + j];
      std::uint8_t* rec = p.records.data() + (b * kBatchSize + j) * in.record_bytes;
      std::uint8_t* listed = p.listed_codes.data() + (b * kBatchSize + j) * lb;
      if (l < s) {
        const std::uint64_t i = oc->survivors[l] - first;  // old position in the cluster
        RabitqCode& k = kept[j];
        quant::rabitq::UnpackRamBatchSlot(layout, old_blocks + i / kBatchSize * in.block_bytes,
                                          i % kBatchSize, k.bits.data(), &k.f_add, &k.f_rescale,
                                          &k.f_error);
        slots[j] = &k;
        std::memcpy(rec, old_records.data() + i * in.record_bytes, in.record_bytes);
        if (lb != 0) std::memcpy(listed, old.listed_codes.data() + oc->survivors[l] * lb, lb);
      } else {
        slots[j] = &fresh[l - s];
        if (lb != 0) std::memcpy(listed, fresh_listed.data() + (l - s) * lb, lb);
        if (in.raw) {
          std::memcpy(rec, vecs.data() + std::size_t{l} * d, in.record_bytes);
        } else {
          quant::rabitq::WriteSsdRecord(layout, fresh[l - s], rec);
        }
      }
      p.ids.push_back(NewRowOf(in, *oc, l));
    }
    quant::rabitq::PackRamBatch(layout, slots, p.ram_blocks.data() + b * in.block_bytes);
  }
  oc->pieces.push_back(std::move(p));
  return Status::OK();
}

// Old cluster c -> its pieces in the new index.
Status MergeCluster(const MergeInputs& in, std::size_t c, OldCluster* oc) {
  const search::IvfIndexData& old = *in.old;
  const std::size_t d = in.dim;
  if (oc->fate == Fate::kDrop) return Status::OK();
  std::vector<std::uint8_t> old_records;
  if (!oc->survivors.empty()) STRATA_RETURN_IF_ERROR(ReadClusterRecords(old, c, &old_records));
  if (oc->fate == Fate::kCopy) {
    Piece p;
    p.centroid.assign(old.centroids.begin() + static_cast<std::ptrdiff_t>(c * d),
                      old.centroids.begin() + static_cast<std::ptrdiff_t>((c + 1) * d));
    for (std::uint64_t pos : oc->survivors) p.ids.push_back(in.new_row_of[old.ids[pos]]);
    p.ram_blocks.assign(old.ram_blocks.begin() + old.block_offsets[c] * in.block_bytes,
                        old.ram_blocks.begin() + old.block_offsets[c + 1] * in.block_bytes);
    p.records = std::move(old_records);
    p.listed_codes.assign(old.listed_codes.begin() + old.cluster_offsets[c] * in.listed_bytes,
                          old.listed_codes.begin() + old.cluster_offsets[c + 1] * in.listed_bytes);
    oc->pieces.push_back(std::move(p));
    return Status::OK();
  }
  // Member vectors, survivors first: the raw records themselves, or what
  // read_old_rows gave; the inserted rows in any case.
  const std::size_t s = oc->survivors.size();
  const std::size_t m = s + oc->inserted.size();
  const bool have_vectors = in.raw || oc->fetched || s == 0;
  std::vector<float> vecs(m * d);
  if (in.raw) {
    for (std::size_t l = 0; l < s; ++l) {
      std::memcpy(
          vecs.data() + l * d,
          old_records.data() + (oc->survivors[l] - old.cluster_offsets[c]) * in.record_bytes,
          in.record_bytes);
    }
  } else if (oc->fetched) {
    std::copy_n(in.fetched + oc->fetched_at * d, s * d, vecs.data());
  }
  for (std::size_t l = s; l < m; ++l) {
    std::copy_n(in.new_values + std::size_t{oc->inserted[l - s]} * d, d, vecs.data() + l * d);
  }
  if (oc->fate == Fate::kSplit) return SplitCluster(in, c, vecs, oc);
  return RewriteCluster(in, c, vecs, have_vectors, old_records, oc);
}

}  // namespace

Result<IvfBuildReport> MergeIvfIndex(const std::string& old_dir,
                                     std::span<const std::uint8_t> deleted,
                                     std::span<const float> new_rows, const std::string& index_dir,
                                     const IvfBuildOptions& options, IvfMergeReport* merge_report,
                                     const IvfRowReader& read_old_rows) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  const Timer total;
  IvfBuildReport report;
  IvfMergeReport local_report;
  IvfMergeReport& mr = merge_report ? *merge_report : local_report;
  mr = IvfMergeReport{};

  // ---- load the old index's tables (records stay on disk) ----
  Timer phase;
  format::Manifest m;
  search::IvfIndexData old;
  STRATA_RETURN_IF_ERROR(LoadIvfIndexData(old_dir, false, &m, &old));
  STRATA_RETURN_IF_ERROR(CheckMergeInputs(m, options.metric, deleted.size(), new_rows.size()));
  const std::size_t d = m.dim;
  const std::uint64_t n_old = m.num_vectors;
  const std::uint64_t n_new = new_rows.size() / d;
  const std::size_t C_old = old.num_clusters();
  const auto& qz = *old.quantizer;
  ivf::CoarseKind coarse_kind = old.coarse->kind();
  const std::uint64_t seed = m.parameters.value("seed", std::uint64_t{options.seed});
  const std::uint64_t target = std::max<std::uint64_t>(
      1, m.parameters.value("target_cluster_size", (n_old + C_old - 1) / C_old));

  MergeInputs in;
  in.old = &old;
  in.dim = d;
  in.record_bytes = old.records.packing().record_bytes();
  in.block_bytes = qz.layout().ram_batch_bytes();
  in.raw = old.rerank == ivf::RerankKind::kRaw;
  in.listed_bytes = old.listed_codes.empty() ? 0 : qz.layout().listed_code_bytes();
  in.page_group = options.page_order == "locality" ? old.records.packing().records_per_unit() : 0;
  in.new_row_of.assign(n_old, 0);
  for (std::uint64_t r = 0; r < n_old; ++r) {
    in.new_row_of[r] = static_cast<std::uint32_t>(in.survivors);
    if (!deleted[r]) ++in.survivors;
  }
  const std::uint64_t n = in.survivors + n_new;
  if (n == 0) return Status::InvalidArgument("merge: no rows left");
  if (n >= 0xFFFFFFFFull) return Status::NotSupported("merge: at most 2^32 - 2 rows");
  in.split_limit = 2 * target;
  in.seed = seed;
  mr.old_clusters = C_old;
  mr.target_cluster_size = target;
  mr.rows_deleted = n_old - in.survivors;
  mr.rows_inserted = n_new;
  std::vector<float> new_values(new_rows.begin(), new_rows.end());
  if (m.metric == Metric::kCosine) {
    STRATA_RETURN_IF_ERROR(NormalizeRowsForCosine(new_values.data(), n_new, d, "new rows"));
  }
  in.new_values = new_values.data();
  report.seconds_load = phase.ElapsedSeconds();
  STRATA_RETURN_IF_ERROR(StopRequested(options.stop, "ivf index merge"));

  // ---- assign the new rows to their nearest centroid (squared L2, as the
  // build assigns) and decide each cluster's fate ----
  phase.Reset();
  std::vector<std::uint32_t> labels(n_new);
  if (n_new > 0) {
    STRATA_RETURN_IF_ERROR(quant::AssignNearest(new_values.data(), n_new, d, old.centroids.data(),
                                                C_old, labels.data(), nullptr, options.threads));
  }
  std::vector<OldCluster> clusters(C_old);
  for (std::uint64_t i = 0; i < n_new; ++i) {
    clusters[labels[i]].inserted.push_back(static_cast<std::uint32_t>(i));
  }
  std::vector<std::uint64_t> fetch_rows;
  for (std::size_t c = 0; c < C_old; ++c) {
    OldCluster& oc = clusters[c];
    const std::uint64_t size = old.cluster_offsets[c + 1] - old.cluster_offsets[c];
    for (std::uint64_t pos = old.cluster_offsets[c]; pos < old.cluster_offsets[c + 1]; ++pos) {
      if (!deleted[old.ids[pos]]) oc.survivors.push_back(pos);
    }
    const std::uint64_t members = oc.survivors.size() + oc.inserted.size();
    const bool vectors = in.raw || read_old_rows || oc.survivors.empty();
    if (members == 0) {
      oc.fate = Fate::kDrop;
    } else if (members > in.split_limit && vectors) {
      oc.fate = Fate::kSplit;
    } else if (oc.survivors.size() == size && oc.inserted.empty()) {
      oc.fate = Fate::kCopy;
    } else {
      oc.fate = Fate::kRewrite;
      oc.split_skipped = members > in.split_limit;
    }
    // Full vectors of the survivors are needed to split, and to re-order a
    // rewritten cluster in the build's page groups. A cluster that gained
    // less than a quarter of its survivors keeps their order and takes its
    // new rows after them instead: re-ordering every touched cluster read
    // the whole index's vectors back (at 1M, 10 % new and 5 % deleted touch
    // every cluster: 5.8 s against 8.2 s for a rebuild;
    // bench/results/collection_synth1m.md).
    const bool reorder = oc.fate == Fate::kRewrite && oc.inserted.size() * 4 > oc.survivors.size();
    if (!in.raw && read_old_rows && (oc.fate == Fate::kSplit || reorder)) {
      oc.fetched = true;
      oc.fetched_at = fetch_rows.size();
      for (std::uint64_t pos : oc.survivors) fetch_rows.push_back(old.ids[pos]);
    }
  }
  std::vector<float> fetched;
  if (!fetch_rows.empty()) {
    fetched.resize(fetch_rows.size() * d);
    STRATA_RETURN_IF_ERROR(
        read_old_rows(fetch_rows, fetched.data()).WithContext("merge: old rows"));
    if (m.metric == Metric::kCosine) {
      STRATA_RETURN_IF_ERROR(
          NormalizeRowsForCosine(fetched.data(), fetch_rows.size(), d, "old rows"));
    }
    in.fetched = fetched.data();
  }
  mr.rows_read = fetch_rows.size();

  // ---- rewrite: clusters in parallel, each single-threaded ----
  std::mutex mu;
  Status first_error;
  std::atomic<bool> failed{false};
  {
    quant::ScopedSingleThreadedBlas one_level;  // workers call sgemm (k-means, rotation)
    ParallelForChunks(C_old, options.threads, 1, [&](std::size_t b, std::size_t e, unsigned) {
      for (std::size_t c = b; c < e && !failed.load(std::memory_order_relaxed); ++c) {
        Status st = StopRequested(options.stop, "ivf index merge");
        if (st.ok()) st = MergeCluster(in, c, &clusters[c]);
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (!failed.exchange(true)) first_error = st.WithContext("cluster " + std::to_string(c));
        }
      }
    });
  }
  if (failed.load()) return first_error;
  std::vector<float>().swap(fetched);
  report.seconds_cluster = phase.ElapsedSeconds();

  // ---- tables of the new index; the coarse quantizer kept or rebuilt ----
  phase.Reset();
  format::IvfRamParts parts;
  std::vector<const Piece*> pieces;
  bool centroids_changed = false;
  for (const OldCluster& oc : clusters) {
    switch (oc.fate) {
      case Fate::kCopy:
        ++mr.clusters_copied;
        break;
      case Fate::kRewrite:
        ++mr.clusters_rewritten;
        break;
      case Fate::kSplit:
        ++mr.clusters_split;
        mr.clusters_from_splits += oc.pieces.size();
        break;
      case Fate::kDrop:
        ++mr.clusters_dropped;
        break;
    }
    if (oc.split_skipped) ++mr.splits_skipped;
    centroids_changed |= oc.fate == Fate::kSplit || oc.fate == Fate::kDrop;
    for (const Piece& p : oc.pieces) {
      pieces.push_back(&p);
      parts.centroids.insert(parts.centroids.end(), p.centroid.begin(), p.centroid.end());
      parts.cluster_sizes.push_back(p.ids.size());
      parts.ids.insert(parts.ids.end(), p.ids.begin(), p.ids.end());
      parts.ram_blocks.insert(parts.ram_blocks.end(), p.ram_blocks.begin(), p.ram_blocks.end());
      parts.listed_codes.insert(parts.listed_codes.end(), p.listed_codes.begin(),
                                p.listed_codes.end());
    }
  }
  const std::size_t C = pieces.size();
  mr.clusters = C;
  qz.Serialize(&parts.quantizer);
  if (centroids_changed) {
    STRATA_ASSIGN_OR_RETURN(ivf::CoarseQuantizer coarse,
                            ivf::CoarseQuantizer::Build(parts.centroids.data(), C, d, m.metric,
                                                        coarse_kind, seed, options.threads));
    coarse.Serialize(&parts.coarse);
  } else {
    old.coarse->Serialize(&parts.coarse);  // same centroids: the same quantizer
  }
  report.seconds_encode = phase.ElapsedSeconds();

  // ---- write (records streamed from the pieces in storage order) ----
  IvfIndexContents contents;
  contents.type = m.element_type;
  contents.dim = m.dim;
  contents.n = n;
  contents.quantizer = &qz;
  contents.rerank = old.rerank;
  contents.coarse = coarse_kind;
  contents.packing = old.records.packing();
  contents.parts = &parts;
  std::size_t piece = 0;
  std::uint64_t piece_first = 0;
  contents.records = [&](std::uint64_t pos, std::uint8_t* out) {
    while (pos >= piece_first + pieces[piece]->ids.size())
      piece_first += pieces[piece++]->ids.size();
    std::memcpy(out, pieces[piece]->records.data() + (pos - piece_first) * in.record_bytes,
                in.record_bytes);
    return Status::OK();
  };
  contents.seed = seed;
  contents.target_cluster_size = target;
  contents.build_extra = {{"merged_from", old_dir},
                          {"rows_deleted", mr.rows_deleted},
                          {"rows_inserted", mr.rows_inserted},
                          {"rows_read", mr.rows_read},
                          {"clusters_copied", mr.clusters_copied},
                          {"clusters_rewritten", mr.clusters_rewritten},
                          {"clusters_split", mr.clusters_split},
                          {"clusters_from_splits", mr.clusters_from_splits},
                          {"clusters_dropped", mr.clusters_dropped},
                          {"splits_skipped", mr.splits_skipped}};
  IvfBuildOptions write_options = options;
  write_options.metric = m.metric;
  STRATA_RETURN_IF_ERROR(
      WriteIvfIndex(contents, index_dir, write_options, nullptr, total, &report));
  return report;
}

}  // namespace strata
