// IvfSearchContext: query preparation, the RAM scan of the probed clusters,
// the k-NN buffer and re-ranking. The read pipelines are in ivf_pipelines.cc.
#include "search/ivf_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/distance.h"

namespace strata::search {

using quant::rabitq::BatchEstimates;
using quant::rabitq::kBatchSize;

IvfSearchContext::~IvfSearchContext() = default;

Result<std::unique_ptr<IvfSearchContext>> IvfSearchContext::Create(const IvfIndexData& index,
                                                                   const IoQueueOptions& io_options,
                                                                   std::uint32_t max_inflight) {
  if (max_inflight == 0 || max_inflight > 256) {
    return Status::InvalidArgument("ivf search: max inflight must be in 1..256");
  }
  std::unique_ptr<IvfSearchContext> ctx(new IvfSearchContext(index));
  ctx->max_inflight_ = max_inflight;
  IoQueueOptions io = io_options;
  io.queue_depth = max_inflight;
  STRATA_ASSIGN_OR_RETURN(ctx->queue_, MakeIoQueue(io));
  STRATA_ASSIGN_OR_RETURN(ctx->file_id_, ctx->queue_->AddFile(index.records.file()));
  STRATA_ASSIGN_OR_RETURN(ctx->buffers_,
                          BufferPool::Create(max_inflight, index.records.UnitBytes()));
  STRATA_RETURN_IF_ERROR(ctx->queue_->RegisterBuffers(ctx->buffers_.region()));
  ctx->requests_.resize(max_inflight);
  ctx->groups_.resize(max_inflight);
  ctx->completed_.resize(max_inflight);
  ctx->gather_.resize(index.records.packing().record_bytes());
  ctx->raw_.resize(index.dim);
  return ctx;
}

float IvfSearchContext::KthDistance() const {
  return knn_.size() < prune_rank_ ? std::numeric_limits<float>::infinity()
                                   : knn_[prune_rank_ - 1].first;
}

float IvfSearchContext::QuantileDistance(float alpha) const {
  if (knn_.size() < prune_rank_) return std::numeric_limits<float>::infinity();
  const long rank_max = prune_rank_;
  const auto rank =
      std::clamp<long>(std::lround(alpha * static_cast<float>(prune_rank_)), 1, rank_max);
  return knn_[static_cast<std::size_t>(rank - 1)].first;
}

void IvfSearchContext::Offer(float distance, std::uint32_t id) {
  if (knn_.size() >= k_ && !(distance < knn_.back().first)) return;
  const std::pair<float, std::uint32_t> e{distance, id};
  auto it = std::upper_bound(knn_.begin(), knn_.end(), e);
  knn_.insert(it, e);
  if (knn_.size() > k_) knn_.pop_back();
}

Status IvfSearchContext::RerankGroup(const PageGroup& group, const std::byte* unit_data) {
  STRATA_RETURN_IF_ERROR(index_.records.VerifyUnit(
      group.unit, std::span<const std::byte>(unit_data, index_.records.UnitBytes())));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(unit_data);
  const ivf::PagePacking& packing = index_.records.packing();
  const kernels::DistanceKernels& kern = kernels::BestKernels();
  std::uint32_t done = 0;
  for (std::uint32_t i = group.first; i < group.first + group.count; ++i) {
    const Candidate& c = cands_[i];
    // Re-screen against the true current k-th distance: a lower bound at or
    // above it cannot enter the result (up to the bound's failure rate).
    if (!(c.lower < KthDistance())) continue;
    const std::uint8_t* rec = packing.Gather(bytes, c.slot, format::kSector, gather_.data());
    float d;
    if (index_.rerank == ivf::RerankKind::kRaw) {
      std::memcpy(raw_.data(), rec, index_.dim * sizeof(float));
      if (index_.metric == Metric::kL2) {
        d = kern.l2_f32(query_.data(), raw_.data(), index_.dim);
      } else {
        const float ip = kern.ip_f32(query_.data(), raw_.data(), index_.dim);
        d = index_.metric == Metric::kCosine ? 1.0f - ip : -ip;
      }
    } else {
      d = index_.quantizer->Refine(rq_, factors_[c.probe], c.prefix_ip, rec);
    }
    ++done;
    Offer(d, c.id);
  }
  stats_.reranked += done;
  stats_.full_distances += done;
  if (done == 0) ++stats_.wasted_reads;
  return Status::OK();
}

Status IvfSearchContext::AddToPage(std::uint64_t unit, std::uint32_t at,
                                   const SearchParams& params) {
  if (open_valid_ && open_.unit != unit) STRATA_RETURN_IF_ERROR(ClosePage(params));
  if (!open_valid_) {
    open_ = PageGroup{cands_[at].lower, unit, at, 0};
    open_valid_ = true;
  }
  open_.lower = std::min(open_.lower, cands_[at].lower);
  ++open_.count;
  return Status::OK();
}

Status IvfSearchContext::Scan(const SearchParams& params) {
  const quant::rabitq::RabitqQuantizer& qz = *index_.quantizer;
  const std::size_t block_bytes = qz.layout().ram_batch_bytes();
  const std::uint32_t rpu = index_.records.packing().records_per_unit();
  const bool naive = params.pipeline == IvfPipeline::kNaive;
  const bool excode = index_.rerank == ivf::RerankKind::kExCode;
  const IdFilter* filter = params.filter;
  BatchEstimates est;
  factors_.resize(hits_.size());
  for (std::uint32_t probe = 0; probe < hits_.size(); ++probe) {
    const std::uint32_t c = hits_[probe].cluster;
    const std::uint64_t begin = index_.cluster_offsets[c];
    const std::uint64_t n = index_.cluster_offsets[c + 1] - begin;
    factors_[probe] = qz.ForClusterFromDistances(hits_[probe].l2, hits_[probe].inner_product);
    ++stats_.clusters_probed;
    if (n == 0) continue;
    const std::uint64_t first_unit = index_.records.first_unit()[c];
    for (std::uint64_t b = 0; b * kBatchSize < n; ++b) {
      const std::uint8_t* block =
          index_.ram_blocks.data() + (index_.block_offsets[c] + b) * block_bytes;
      qz.EstimateBatch(rq_, factors_[probe], block, &est);
      const std::size_t m = std::min<std::uint64_t>(kBatchSize, n - b * kBatchSize);
      stats_.pq_distances += static_cast<std::uint32_t>(m);
      for (std::size_t s = 0; s < m; ++s) {
        // Threshold read per slot: naive re-ranks inline, so dist_k moves.
        if (!(est.lower[s] < KthDistance())) continue;
        const std::uint64_t pos = b * kBatchSize + s;
        if (filter != nullptr && !filter->Accept(index_.ids[begin + pos])) continue;
        ++stats_.survivors;
        const std::uint64_t unit = first_unit + pos / rpu;
        Candidate cand;
        cand.probe = probe;
        cand.slot = static_cast<std::uint32_t>(pos % rpu);
        cand.id = index_.ids[begin + pos];
        cand.lower = est.lower[s];
        cand.prefix_ip = excode ? qz.ExactPrefixIp(rq_, block, s) : 0.0f;
        const auto at = static_cast<std::uint32_t>(cands_.size());
        cands_.push_back(cand);
        if (naive) {
          STRATA_RETURN_IF_ERROR(OnSurvivorNaive(unit, at));
          continue;
        }
        STRATA_RETURN_IF_ERROR(AddToPage(unit, at, params));
      }
      STRATA_RETURN_IF_ERROR(AfterBlock(params));
    }
    // Records of different clusters never share a unit.
    if (open_valid_) STRATA_RETURN_IF_ERROR(ClosePage(params));
  }
  return Status::OK();
}

Status IvfSearchContext::Search(std::span<const float> query, const SearchParams& params,
                                std::span<VectorId> ids, std::span<float> distances,
                                QueryStats* stats) {
  const Timer total;
  STRATA_RETURN_IF_ERROR(params.Validate());
  if (query.size() != index_.dim) {
    return Status::InvalidArgument("query has " + std::to_string(query.size()) +
                                   " dimensions, index has " + std::to_string(index_.dim));
  }
  if (ids.size() < params.k || distances.size() < params.k) {
    return Status::InvalidArgument("output spans are smaller than k");
  }
  for (float v : query) {
    if (!std::isfinite(v)) return Status::InvalidArgument("query has a non-finite value");
  }
  // The restricted path needs the row -> position map; without it a
  // restrict_to search probes clusters like any other (and its I/O settings).
  listed_scan_ = params.restrict_to != nullptr && index_.position_of.size() == index_.num_vectors();
  inflight_limit_ = params.inflight                                    ? params.inflight
                    : listed_scan_ && max_inflight_ >= kListedInflight ? kListedInflight
                                                                       : kDefaultInflight;
  if (inflight_limit_ > max_inflight_) {
    return Status::InvalidArgument("inflight " + std::to_string(inflight_limit_) +
                                   " exceeds this searcher's maximum " +
                                   std::to_string(max_inflight_));
  }
  query_.assign(query.begin(), query.end());
  if (index_.metric == Metric::kCosine && !kernels::NormalizeInPlace(query_.data(), index_.dim)) {
    return Status::InvalidArgument("zero query vector has no cosine distance");
  }
  STRATA_RETURN_IF_ERROR(index_.quantizer->PrepareQuery(query_.data(), &rq_));
  k_ = params.k;
  prune_rank_ = params.prune_rank != 0 ? params.prune_rank : params.k;
  stats_ = QueryStats{};
  knn_.clear();
  cands_.clear();
  pending_.clear();
  inflight_candidates_ = 0;
  open_valid_ = false;
  free_slots_.clear();
  for (std::uint32_t i = inflight_limit_; i-- > 0;) free_slots_.push_back(i);
  queue_->ResetStats();

  // A restricted search ranks its rows through the scheduled pipeline
  // whatever the configured one: every page is a candidate ordered by its
  // bound, read while the bound can beat dist_k (the full pipeline's
  // alpha-quantile drain lost 0.1 of recall@10 here: 0.84-0.92).
  SearchParams restricted = params;
  Status st;
  if (listed_scan_) {
    restricted.pipeline = IvfPipeline::kScheduled;
    st = ScanRestricted(restricted);
  } else {
    const std::uint32_t nprobe = params.EffectiveNprobe(index_.default_nprobe);
    index_.coarse->Search(query_.data(), nprobe, &coarse_scratch_, &hits_);
    st = Scan(params);
  }
  const Timer drain;
  if (st.ok()) st = Drain(listed_scan_ ? restricted : params);
  stats_.drain_us = drain.ElapsedMicros();
  if (!st.ok()) {
    // Collect whatever is still in flight so the buffers are free again.
    while (queue_->in_flight() > 0) {
      if (!queue_->Wait(completed_, queue_->in_flight()).ok()) break;
    }
    return st;
  }
  const IoStats io = queue_->ResetStats();
  stats_.pages_read = static_cast<std::uint32_t>(io.pages_read);
  stats_.reads = static_cast<std::uint32_t>(io.reads);
  stats_.io_wait_us = static_cast<double>(io.wait_ns) * 1e-3;
  for (std::uint32_t i = 0; i < params.k; ++i) {
    if (i < knn_.size()) {
      ids[i] = knn_[i].second;
      distances[i] = knn_[i].first;
    } else {
      ids[i] = kInvalidVectorId;
      distances[i] = std::numeric_limits<float>::infinity();
    }
  }
  stats_.latency_us = total.ElapsedMicros();
  if (stats) *stats = stats_;
  return Status::OK();
}

}  // namespace strata::search
