#include "ivf/coarse_quantizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ivf/byte_io.h"
#include "kernels/distance.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/kmeans.h"
#include "quant/pq/nearest.h"

namespace strata::ivf {
namespace {

constexpr std::uint32_t kCoarseMagic = 0x43465649;  // "IVFC"
constexpr std::uint16_t kCoarseVersion = 1;
// Centroids per inner group (RaBitQ-SSD: about 1,000).
constexpr std::size_t kCentroidsPerGroup = 1000;

using quant::rabitq::BatchEstimates;
using quant::rabitq::ClusterQueryFactors;
using quant::rabitq::kBatchSize;
using quant::rabitq::RabitqOptions;
using quant::rabitq::RabitqQuantizer;

}  // namespace

Status ParseCoarseKind(const std::string& name, CoarseKind* out) {
  if (name == "irq") {
    *out = CoarseKind::kIrq;
  } else if (name == "flat") {
    *out = CoarseKind::kFlat;
  } else {
    return Status::InvalidArgument("coarse quantizer '" + name + "' (known: irq, flat)");
  }
  return Status::OK();
}

const char* CoarseKindName(CoarseKind kind) { return kind == CoarseKind::kIrq ? "irq" : "flat"; }

Result<CoarseQuantizer> CoarseQuantizer::Build(const float* centroids, std::size_t num_clusters,
                                               std::size_t dim, Metric metric, CoarseKind kind,
                                               std::uint64_t seed, unsigned threads) {
  if (centroids == nullptr || num_clusters == 0 || dim == 0 || num_clusters >= 0xFFFFFFFFull) {
    return Status::InvalidArgument("coarse quantizer: no centroids");
  }
  if (metric != Metric::kL2 && metric != Metric::kInnerProduct && metric != Metric::kCosine) {
    return Status::InvalidArgument("coarse quantizer: unknown metric");
  }
  if (kind != CoarseKind::kIrq && kind != CoarseKind::kFlat) {
    return Status::InvalidArgument("coarse quantizer: unknown kind");
  }
  CoarseQuantizer q;
  q.kind_ = kind;
  q.metric_ = metric;
  q.centroids_ = centroids;
  q.num_clusters_ = num_clusters;
  q.dim_ = dim;
  if (kind == CoarseKind::kFlat) return q;

  // Inner groups: k-means over the centroids themselves.
  const std::size_t groups = std::clamp<std::size_t>(
      static_cast<std::size_t>(
          std::llround(static_cast<double>(num_clusters) / kCentroidsPerGroup)),
      1, num_clusters);
  std::vector<std::uint32_t> label(num_clusters, 0);
  if (groups == 1) {
    q.group_means_.assign(dim, 0.0f);
    for (std::size_t c = 0; c < num_clusters; ++c) {
      for (std::size_t j = 0; j < dim; ++j) q.group_means_[j] += centroids[c * dim + j];
    }
    for (float& v : q.group_means_) v /= static_cast<float>(num_clusters);
  } else {
    quant::KMeansOptions km;
    km.k = groups;
    km.iterations = 10;
    km.seed = seed;
    km.threads = threads;
    STRATA_ASSIGN_OR_RETURN(quant::KMeansResult r,
                            quant::TrainKMeansOnRows(centroids, num_clusters, dim, km));
    q.group_means_ = std::move(r.centroids);
    quant::CentroidSearcher searcher(q.group_means_.data(), groups, dim);
    quant::CentroidSearcher::Scratch scratch;
    quant::ScopedSingleThreadedBlas single;
    searcher.Nearest(centroids, dim, num_clusters, label.data(), nullptr, &scratch);
  }
  q.group_offsets_.assign(groups + 1, 0);
  for (std::uint32_t l : label) ++q.group_offsets_[l + 1];
  for (std::size_t g = 0; g < groups; ++g) q.group_offsets_[g + 1] += q.group_offsets_[g];
  q.members_.resize(num_clusters);
  {
    std::vector<std::uint64_t> cursor(q.group_offsets_.begin(), q.group_offsets_.end() - 1);
    for (std::size_t c = 0; c < num_clusters; ++c) {
      q.members_[cursor[label[c]]++] = static_cast<std::uint32_t>(c);
    }
  }

  // 9-bit RaBitQ codes of every centroid relative to its group mean. Cosine
  // selects by L2 to the (unnormalised) centroids, like the fine search.
  RabitqOptions ro;
  ro.dim = dim;
  ro.metric = metric == Metric::kInnerProduct ? Metric::kInnerProduct : Metric::kL2;
  ro.total_bits = 9;
  ro.seed = seed ^ 0x49525100ull;
  STRATA_ASSIGN_OR_RETURN(RabitqQuantizer rq, RabitqQuantizer::Create(ro));
  const auto& layout = rq.layout();
  q.block_offsets_.assign(groups + 1, 0);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::uint64_t n = q.group_offsets_[g + 1] - q.group_offsets_[g];
    q.block_offsets_[g + 1] = q.block_offsets_[g] + (n + kBatchSize - 1) / kBatchSize;
  }
  q.blocks_.assign(q.block_offsets_.back() * layout.ram_batch_bytes(), 0);
  q.records_.assign(num_clusters * layout.ssd_record_bytes(), 0);
  std::vector<float> rows;
  for (std::size_t g = 0; g < groups; ++g) {
    const std::uint64_t begin = q.group_offsets_[g];
    const std::uint64_t n = q.group_offsets_[g + 1] - begin;
    if (n == 0) continue;
    rows.resize(n * dim);
    for (std::uint64_t i = 0; i < n; ++i) {
      std::copy_n(centroids + static_cast<std::size_t>(q.members_[begin + i]) * dim, dim,
                  rows.data() + i * dim);
    }
    STRATA_RETURN_IF_ERROR(
        rq.EncodeCluster(rows.data(), n, q.group_means_.data() + g * dim,
                         q.blocks_.data() + q.block_offsets_[g] * layout.ram_batch_bytes(),
                         q.records_.data() + begin * layout.ssd_record_bytes(), threads));
  }
  q.rotated_means_.resize(groups * rq.padded_dim());
  for (std::size_t g = 0; g < groups; ++g) {
    rq.RotateCentroid(q.group_means_.data() + g * dim,
                      q.rotated_means_.data() + g * rq.padded_dim());
  }
  q.quantizer_.emplace(std::move(rq));
  return q;
}

void CoarseQuantizer::Serialize(std::vector<std::uint8_t>* out) const {
  out->clear();
  ByteWriter w(out);
  w.Put(kCoarseMagic);
  w.Put(kCoarseVersion);
  w.Put(static_cast<std::uint8_t>(kind_));
  w.Put(static_cast<std::uint8_t>(metric_));
  w.Put<std::uint64_t>(num_clusters_);
  w.Put<std::uint64_t>(dim_);
  if (kind_ != CoarseKind::kIrq) return;
  w.Put<std::uint64_t>(num_groups());
  std::vector<std::uint8_t> qblob;
  quantizer_->Serialize(&qblob);
  w.PutArray<std::uint8_t>(qblob);
  w.PutArray<float>(group_means_);
  w.PutArray<std::uint64_t>(group_offsets_);
  w.PutArray<std::uint32_t>(members_);
  w.PutArray<std::uint8_t>(blocks_);
  w.PutArray<std::uint8_t>(records_);
}

Result<CoarseQuantizer> CoarseQuantizer::Deserialize(std::span<const std::uint8_t> blob,
                                                     const float* centroids,
                                                     std::size_t num_clusters, std::size_t dim) {
  auto bad = [](const std::string& what) {
    return Status::Corruption("coarse quantizer: " + what);
  };
  ByteReader r(blob);
  std::uint32_t magic = 0;
  std::uint16_t version = 0;
  std::uint8_t kind = 0, metric = 0;
  std::uint64_t c = 0, d = 0;
  if (!r.Get(&magic) || magic != kCoarseMagic) return bad("bad magic");
  if (!r.Get(&version)) return bad("truncated");
  if (version > kCoarseVersion) return Status::NotSupported("coarse quantizer: newer version");
  if (!r.Get(&kind) || !r.Get(&metric) || !r.Get(&c) || !r.Get(&d)) return bad("truncated");
  if (kind > 1 || metric > 2) return bad("bad kind or metric");
  if (c != num_clusters || d != dim || centroids == nullptr) return bad("shape mismatch");
  CoarseQuantizer q;
  q.kind_ = static_cast<CoarseKind>(kind);
  q.metric_ = static_cast<Metric>(metric);
  q.centroids_ = centroids;
  q.num_clusters_ = num_clusters;
  q.dim_ = dim;
  if (q.kind_ == CoarseKind::kFlat) {
    if (!r.done()) return bad("trailing bytes");
    return q;
  }
  std::uint64_t groups = 0;
  std::vector<std::uint8_t> qblob;
  if (!r.Get(&groups) || groups == 0 || groups > c || !r.GetArray(&qblob) ||
      !r.GetArray(&q.group_means_) || !r.GetArray(&q.group_offsets_) || !r.GetArray(&q.members_) ||
      !r.GetArray(&q.blocks_) || !r.GetArray(&q.records_) || !r.done()) {
    return bad("truncated");
  }
  auto rq = RabitqQuantizer::Deserialize(qblob);
  if (!rq.ok()) return rq.status().WithContext("coarse quantizer");
  const auto& layout = rq->layout();
  if (rq->dim() != dim || q.group_means_.size() != groups * dim ||
      q.group_offsets_.size() != groups + 1 || q.group_offsets_[0] != 0 ||
      q.group_offsets_.back() != c || q.members_.size() != c ||
      q.records_.size() != c * layout.ssd_record_bytes()) {
    return bad("inconsistent tables");
  }
  q.block_offsets_.assign(groups + 1, 0);
  for (std::size_t g = 0; g < groups; ++g) {
    if (q.group_offsets_[g + 1] < q.group_offsets_[g]) return bad("offsets not monotone");
    const std::uint64_t n = q.group_offsets_[g + 1] - q.group_offsets_[g];
    q.block_offsets_[g + 1] = q.block_offsets_[g] + (n + kBatchSize - 1) / kBatchSize;
  }
  if (q.blocks_.size() != q.block_offsets_.back() * layout.ram_batch_bytes()) {
    return bad("block bytes mismatch");
  }
  for (std::uint32_t m : q.members_) {
    if (m >= c) return bad("member id out of range");
  }
  q.rotated_means_.resize(groups * rq->padded_dim());
  for (std::size_t g = 0; g < groups; ++g) {
    rq->RotateCentroid(q.group_means_.data() + g * dim,
                       q.rotated_means_.data() + g * rq->padded_dim());
  }
  q.quantizer_.emplace(std::move(*rq));
  return q;
}

std::size_t CoarseQuantizer::MemoryBytes() const {
  return group_means_.size() * 4 + rotated_means_.size() * 4 + group_offsets_.size() * 8 +
         members_.size() * 4 + block_offsets_.size() * 8 + blocks_.size() + records_.size();
}

float CoarseQuantizer::ExactDistance(const float* query, std::uint32_t cluster, float* l2,
                                     float* ip) const {
  const kernels::DistanceKernels& k = kernels::BestKernels();
  const float* c = centroids_ + static_cast<std::size_t>(cluster) * dim_;
  const float d2 = k.l2_f32(query, c, dim_);
  const float dot = k.ip_f32(query, c, dim_);
  if (l2) *l2 = std::sqrt(std::max(0.0f, d2));
  if (ip) *ip = dot;
  return metric_ == Metric::kInnerProduct ? -dot : d2;
}

CoarseHit CoarseQuantizer::HitOf(const float* query, std::uint32_t cluster) const {
  CoarseHit h;
  h.cluster = cluster;
  h.distance = ExactDistance(query, cluster, &h.l2, &h.inner_product);
  return h;
}

void CoarseQuantizer::Search(const float* query, std::size_t nprobe, CoarseScratch* s,
                             std::vector<CoarseHit>* out) const {
  out->clear();
  nprobe = std::min(nprobe, num_clusters_);
  if (nprobe == 0) return;
  std::vector<std::uint32_t> chosen;
  if (kind_ == CoarseKind::kFlat) {
    s->order.resize(num_clusters_);
    for (std::uint32_t c = 0; c < num_clusters_; ++c) {
      s->order[c] = {ExactDistance(query, c, nullptr, nullptr), c};
    }
    std::partial_sort(s->order.begin(), s->order.begin() + static_cast<std::ptrdiff_t>(nprobe),
                      s->order.end());
    for (std::size_t i = 0; i < nprobe; ++i) chosen.push_back(s->order[i].second);
  } else {
    const RabitqQuantizer& rq = *quantizer_;
    const auto& layout = rq.layout();
    // PrepareQuery only fails for non-finite input, which the caller rejects.
    (void)rq.PrepareQuery(query, &s->query);
    const std::size_t groups = num_groups();
    const kernels::DistanceKernels& k = kernels::BestKernels();
    s->order.resize(groups);
    for (std::uint32_t g = 0; g < groups; ++g) {
      const float* m = group_means_.data() + static_cast<std::size_t>(g) * dim_;
      const float d =
          metric_ == Metric::kInnerProduct ? -k.ip_f32(query, m, dim_) : k.l2_f32(query, m, dim_);
      s->order[g] = {d, g};
    }
    std::sort(s->order.begin(), s->order.end());
    const std::size_t scan = std::min(groups, std::max<std::size_t>(1, (nprobe + 1) / 2));
    // Max-heap of the nprobe best refined estimates.
    s->heap.clear();
    BatchEstimates est;
    // Scan at least `scan` groups, and on until n_probe centroids were seen.
    std::uint64_t seen = 0;
    for (std::size_t gi = 0; gi < groups && (gi < scan || seen < nprobe); ++gi) {
      const std::uint32_t g = s->order[gi].second;
      const ClusterQueryFactors f = rq.ForCluster(
          s->query, rotated_means_.data() + static_cast<std::size_t>(g) * rq.padded_dim());
      const std::uint64_t begin = group_offsets_[g];
      const std::uint64_t n = group_offsets_[g + 1] - begin;
      seen += n;
      for (std::uint64_t b = 0; b * kBatchSize < n; ++b) {
        const std::uint8_t* block =
            blocks_.data() + (block_offsets_[g] + b) * layout.ram_batch_bytes();
        rq.EstimateBatch(s->query, f, block, &est);
        const std::size_t m = std::min<std::uint64_t>(kBatchSize, n - b * kBatchSize);
        for (std::size_t slot = 0; slot < m; ++slot) {
          const bool full = s->heap.size() >= nprobe;
          if (full && est.lower[slot] >= s->heap.front().first) continue;
          const std::uint64_t pos = begin + b * kBatchSize + slot;
          const float refined = rq.Refine(s->query, f, est.prefix_ip[slot],
                                          records_.data() + pos * layout.ssd_record_bytes());
          if (full && refined >= s->heap.front().first) continue;
          if (full) {
            std::pop_heap(s->heap.begin(), s->heap.end());
            s->heap.pop_back();
          }
          s->heap.emplace_back(refined, members_[pos]);
          std::push_heap(s->heap.begin(), s->heap.end());
        }
      }
    }
    for (const auto& h : s->heap) chosen.push_back(h.second);
  }
  out->reserve(chosen.size());
  for (std::uint32_t c : chosen) {
    CoarseHit h;
    h.cluster = c;
    h.distance = ExactDistance(query, c, &h.l2, &h.inner_product);
    out->push_back(h);
  }
  std::sort(out->begin(), out->end(), [](const CoarseHit& a, const CoarseHit& b) {
    return a.distance != b.distance ? a.distance < b.distance : a.cluster < b.cluster;
  });
}

}  // namespace strata::ivf
