// The read pipelines of RaBitQ-SSD Table 1 (see ivf_search.h): what happens
// to a surviving candidate or a finished page group, after each FastScan
// block, and after the scan (the drain).
#include <algorithm>
#include <functional>

#include "search/ivf_search.h"

namespace strata::search {
namespace {

// Min-heap order on the page lower bound (ties: lower unit first, so the
// order is deterministic).
bool LaterPage(const IvfSearchContext::PageGroup& a, const IvfSearchContext::PageGroup& b) {
  return a.lower != b.lower ? a.lower > b.lower : a.unit > b.unit;
}

bool IsScheduled(IvfPipeline p) { return p == IvfPipeline::kScheduled || p == IvfPipeline::kFull; }

}  // namespace

Status IvfSearchContext::ReadBlocking(std::uint64_t unit) {
  IoRequest& r = requests_[0];
  r = IoRequest{};
  r.file = file_id_;
  r.offset = index_.records.UnitOffset(unit);
  r.length = index_.records.UnitBytes();
  r.buffer = buffers_.buffer(0);
  IoRequest* p = &r;
  STRATA_RETURN_IF_ERROR(queue_->RunToCompletion(std::span<IoRequest* const>(&p, 1)));
  return Status::OK();
}

Status IvfSearchContext::OnSurvivorNaive(std::uint64_t unit, std::uint32_t index) {
  // One blocking read for this candidate alone, re-ranked at once.
  if (!(cands_[index].lower < KthDistance())) {
    ++stats_.pages_dropped;
    return Status::OK();
  }
  STRATA_RETURN_IF_ERROR(ReadBlocking(unit));
  return RerankGroup(PageGroup{cands_[index].lower, unit, index, 1}, buffers_.buffer(0));
}

Status IvfSearchContext::SubmitGroup(const PageGroup& group) {
  const std::uint32_t slot = free_slots_.back();
  free_slots_.pop_back();
  IoRequest& r = requests_[slot];
  r = IoRequest{};
  r.file = file_id_;
  r.offset = index_.records.UnitOffset(group.unit);
  r.length = index_.records.UnitBytes();
  r.buffer = buffers_.buffer(slot);
  r.tag = slot;
  groups_[slot] = group;
  inflight_candidates_ += group.count;
  submit_batch_.push_back(&r);
  return Status::OK();
}

Status IvfSearchContext::Harvest(bool block, std::size_t min_completions) {
  if (queue_->in_flight() == 0) return Status::OK();
  std::span<IoRequest*> out(completed_.data(), queue_->in_flight());
  std::size_t n = 0;
  if (block) {
    STRATA_ASSIGN_OR_RETURN(
        n, queue_->Wait(out, std::min<std::size_t>(min_completions, queue_->in_flight())));
  } else {
    STRATA_ASSIGN_OR_RETURN(n, queue_->Poll(out));
  }
  Status first;
  for (std::size_t i = 0; i < n; ++i) {
    IoRequest* r = out[i];
    const auto slot = static_cast<std::uint32_t>(r->tag);
    free_slots_.push_back(slot);
    inflight_candidates_ -= groups_[slot].count;
    if (!first.ok()) continue;
    if (!r->status.ok()) {
      // A short or failed read is fatal for the query (never re-rank garbage).
      first = r->status.WithContext(index_.records.path());
      continue;
    }
    first = RerankGroup(groups_[slot], r->buffer);
  }
  return first;
}

Status IvfSearchContext::IssuePending(float threshold, bool fill_first) {
  submit_batch_.clear();
  while (!pending_.empty() && !free_slots_.empty()) {
    // No dist_k yet: what is in flight may already make up k results, and
    // the pages after it are then pruned against a real dist_k (k being
    // the prune rank).
    if (fill_first && knn_.size() < prune_rank_ &&
        knn_.size() + inflight_candidates_ >= prune_rank_) {
      break;
    }
    if (!(pending_.front().lower < threshold)) {
      // The smallest bound fails: every pending page fails (bounds only grow
      // along the set; thresholds only shrink), so drop them all.
      stats_.pages_dropped += static_cast<std::uint32_t>(pending_.size());
      pending_.clear();
      break;
    }
    std::pop_heap(pending_.begin(), pending_.end(), LaterPage);
    STRATA_RETURN_IF_ERROR(SubmitGroup(pending_.back()));
    pending_.pop_back();
  }
  if (submit_batch_.empty()) return Status::OK();
  return queue_->Submit(submit_batch_);
}

Status IvfSearchContext::ClosePage(const SearchParams& params) {
  open_valid_ = false;
  PageGroup g = open_;
  switch (params.pipeline) {
    case IvfPipeline::kNaive:
      return Status::OK();  // naive never forms page groups
    case IvfPipeline::kCoalesced: {
      // Re-check against the current dist_k before paying for the read.
      bool any = false;
      for (std::uint32_t i = g.first; i < g.first + g.count && !any; ++i) {
        any = cands_[i].lower < KthDistance();
      }
      if (!any) {
        ++stats_.pages_dropped;
        return Status::OK();
      }
      STRATA_RETURN_IF_ERROR(ReadBlocking(g.unit));
      return RerankGroup(g, buffers_.buffer(0));
    }
    case IvfPipeline::kOverlapped: {
      // Submit as the scan leaves the page; when the queue is full, block for
      // a completion first.
      while (free_slots_.empty()) STRATA_RETURN_IF_ERROR(Harvest(/*block=*/true));
      submit_batch_.clear();
      STRATA_RETURN_IF_ERROR(SubmitGroup(g));
      return queue_->Submit(submit_batch_);
    }
    case IvfPipeline::kScheduled:
    case IvfPipeline::kFull:
      pending_.push_back(g);
      std::push_heap(pending_.begin(), pending_.end(), LaterPage);
      return Status::OK();
  }
  return Status::OK();
}

Status IvfSearchContext::AfterBlock(const SearchParams& params) {
  if (params.pipeline == IvfPipeline::kOverlapped) return Harvest(/*block=*/false);
  if (!IsScheduled(params.pipeline)) return Status::OK();
  STRATA_RETURN_IF_ERROR(Harvest(/*block=*/false));
  return IssuePending(KthDistance(), params.fill_first);
}

Status IvfSearchContext::Drain(const SearchParams& params) {
  switch (params.pipeline) {
    case IvfPipeline::kNaive:
    case IvfPipeline::kCoalesced:
      return Status::OK();
    case IvfPipeline::kOverlapped:
      while (queue_->in_flight() > 0) STRATA_RETURN_IF_ERROR(Harvest(/*block=*/true));
      return Status::OK();
    case IvfPipeline::kScheduled:
    case IvfPipeline::kFull: {
      const bool quantile = params.pipeline == IvfPipeline::kFull && params.drain_alpha < 1.0f;
      for (;;) {
        const float threshold = quantile ? QuantileDistance(params.drain_alpha) : KthDistance();
        STRATA_RETURN_IF_ERROR(IssuePending(threshold, params.fill_first));
        // Nothing in flight means nothing pending either: fill_first stops
        // only while candidates are in flight, else IssuePending emptied it.
        if (queue_->in_flight() == 0) break;
        // A listed scan's reads were all known when it began (the pages
        // left to read only shrink): it waits for a few completions at a
        // time, so each wake-up and each submission serves several pages
        // (one io_uring_enter and one doorbell where one page was).
        STRATA_RETURN_IF_ERROR(Harvest(
            /*block=*/true, listed_scan_ ? kListedHarvestBatch : 1));
      }
      return Status::OK();
    }
  }
  return Status::OK();
}

}  // namespace strata::search
