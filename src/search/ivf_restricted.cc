// IvfSearchContext::ScanRestricted: the exact-scan fallback of filtered search
// on an IVF index. A selective filter lists its passing rows (inverted lists);
// probing clusters for them wastes the scan on rows that fail and misses
// passing rows outside the probed clusters. Instead each listed row's RAM code
// is estimated alone (its cluster's factors from the query-centroid
// distance, its FastScan block, and its 2-bit filter code when the index
// keeps them), survivors are grouped by page, and the pages
// go through the scheduled pipeline: read in ascending lower bound while the
// bound is below dist_k, so a row is skipped only when its bound proves it
// cannot enter the top k (up to the bound's failure rate; Gao and Long,
// "RaBitQ: Quantizing High-Dimensional Vectors with a Theoretical Error Bound
// for Approximate Nearest Neighbor Search", SIGMOD 2024).
#include <algorithm>

#include "search/ivf_search.h"

namespace strata::search {

namespace {

// A restricted scan is the exact fallback of filtered search, so its lower
// bounds are widened: a failed bound (one above the true distance) drops a
// true neighbour whose page is never read. Synth 1M, 1,000 queries at 0.1 %
// specificity (954 listed rows), recall@10 against exact filtered truth:
// x1.2 0.9986 at 44.2 pages, x1.5 0.9998 at 59.2, x2.0 (eps0 3.8) 1.0000 at
// 92.6 and 875-938 QPS on 2 threads, against 1,266-1,402 at x1.2
// (bench/results/filter_ivf_exactness_synth1m_2026-12-06.md). With the 2-bit
// filter codes the same x2.0 is exact at 38.9 pages and 1,415-1,573 QPS
// (bench/results/filter_ivf_codes_synth1m_2026-12-07.md).
constexpr float kRestrictedBoundScale = 2.0f;

}  // namespace

Status IvfSearchContext::ScanRestricted(const SearchParams& params) {
  const quant::rabitq::RabitqQuantizer& qz = *index_.quantizer;
  const std::size_t block_bytes = qz.layout().ram_batch_bytes();
  const std::uint32_t rpu = index_.records.packing().records_per_unit();
  const bool excode = index_.rerank == ivf::RerankKind::kExCode;
  const IdFilter* filter = params.filter;
  // The 2-bit listed codes, when the index keeps them: a bound about half as
  // wide, so about a third of the rows read (listed_code.cc).
  const std::size_t listed_bytes =
      index_.listed_codes.empty() ? 0 : qz.layout().listed_code_bytes();

  // The listed rows with their storage positions, in storage order: cluster
  // by cluster, block by block, page by page (the row is kept beside its
  // position rather than read back from `ids`: one cache miss less each).
  positions_.clear();
  positions_.reserve(params.restrict_to->size());
  // position_of is read at scattered places: fetched a few rows ahead.
  constexpr std::size_t kPositionAhead = 16;
  const std::vector<std::uint64_t>& listed = *params.restrict_to;
  for (std::size_t at = 0; at < listed.size(); ++at) {
    if (at + kPositionAhead < listed.size() && listed[at + kPositionAhead] < index_.num_vectors()) {
      __builtin_prefetch(&index_.position_of[listed[at + kPositionAhead]]);
    }
    const std::uint64_t row = listed[at];
    if (row >= index_.num_vectors()) continue;  // not in this index
    const auto id = static_cast<std::uint32_t>(row);
    if (filter != nullptr && !filter->Accept(id)) continue;
    positions_.push_back(std::uint64_t{index_.position_of[id]} << 32 | id);
  }
  std::sort(positions_.begin(), positions_.end());
  positions_.erase(std::unique(positions_.begin(), positions_.end()), positions_.end());

  // Each row's cluster, by a search forward of the previous row's (the
  // positions ascend) rather than over all clusters for every row and
  // again for its prefetch.
  const std::vector<std::uint64_t>& offsets = index_.cluster_offsets;
  position_clusters_.resize(positions_.size());
  std::uint32_t cluster = 0;
  for (std::size_t at = 0; at < positions_.size(); ++at) {
    const std::uint64_t pos = positions_[at] >> 32;
    if (offsets[cluster + 1] <= pos) {
      cluster = static_cast<std::uint32_t>(
          std::upper_bound(offsets.begin() + cluster + 1, offsets.end(), pos) - offsets.begin() -
          1);
    }
    position_clusters_[at] = cluster;
  }

  hits_.clear();
  factors_.clear();
  // The listed rows' blocks lie anywhere in RAM: each is fetched a few rows
  // ahead so that its cache misses overlap the estimates before it.
  constexpr std::size_t kPrefetchAhead = 8;
  auto position = [&](std::size_t at) { return positions_[at] >> 32; };
  auto prefetch = [&](std::size_t at) {
    if (at >= positions_.size()) return;
    const std::uint32_t c = position_clusters_[at];
    const std::uint64_t b = (position(at) - index_.cluster_offsets[c]) / quant::rabitq::kBatchSize;
    const std::uint8_t* p = index_.ram_blocks.data() + (index_.block_offsets[c] + b) * block_bytes;
    for (std::size_t off = 0; off < block_bytes; off += 64) __builtin_prefetch(p + off);
    if (listed_bytes != 0) {
      const std::uint8_t* l = index_.listed_codes.data() + position(at) * listed_bytes;
      for (std::size_t off = 0; off < listed_bytes; off += 64) __builtin_prefetch(l + off);
      __builtin_prefetch(l + listed_bytes - 1);
    }
  };
  for (std::size_t a = 0; a < kPrefetchAhead; ++a) prefetch(a);
  std::size_t i = 0;
  while (i < positions_.size()) {
    // One cluster: its query factors, as a probe of this query.
    const std::uint32_t c = position_clusters_[i];
    const std::uint64_t begin = index_.cluster_offsets[c];
    const std::uint64_t end = index_.cluster_offsets[c + 1];
    const ivf::CoarseHit hit = index_.coarse->HitOf(query_.data(), c);
    const auto probe = static_cast<std::uint32_t>(hits_.size());
    hits_.push_back(hit);
    factors_.push_back(qz.ForClusterFromDistances(hit.l2, hit.inner_product));
    factors_.back().g_error *= kRestrictedBoundScale;
    ++stats_.clusters_probed;
    const std::uint64_t first_unit = index_.records.first_unit()[c];
    for (; i < positions_.size() && position(i) < end; ++i) {
      prefetch(i + kPrefetchAhead);
      const std::uint64_t pos = position(i) - begin;
      const std::uint8_t* block =
          index_.ram_blocks.data() +
          (index_.block_offsets[c] + pos / quant::rabitq::kBatchSize) * block_bytes;
      const std::size_t slot = pos % quant::rabitq::kBatchSize;
      const quant::rabitq::SlotEstimate est =
          listed_bytes == 0
              ? qz.EstimateSlot(rq_, factors_[probe], block, slot)
              : qz.EstimateListed(rq_, factors_[probe], block, slot,
                                  index_.listed_codes.data() + position(i) * listed_bytes);
      ++stats_.pq_distances;
      ++stats_.survivors;
      const std::uint64_t unit = first_unit + pos / rpu;
      Candidate cand;
      cand.probe = probe;
      cand.slot = static_cast<std::uint32_t>(pos % rpu);
      cand.id = static_cast<std::uint32_t>(positions_[i]);
      cand.lower = est.lower;
      cand.prefix_ip = excode ? est.prefix_ip : 0.0f;
      const auto at = static_cast<std::uint32_t>(cands_.size());
      cands_.push_back(cand);
      STRATA_RETURN_IF_ERROR(AddToPage(unit, at, params));
    }
    // Records of different clusters never share a unit.
    if (open_valid_) STRATA_RETURN_IF_ERROR(ClosePage(params));
  }
  return Status::OK();
}

}  // namespace strata::search
