// SearchParams validation and the IVF pipeline names: shared by every index
// type's search.
#include <algorithm>
#include <cmath>
#include <string>

#include "strata/search.h"

namespace strata {

std::uint32_t SearchParams::EffectiveListSize() const {
  if (filter == nullptr || !(filter_fraction > 0.0f) || filter_fraction >= 1.0f) return list_size;
  const double wanted = 2.0 * k / filter_fraction;
  const double capped = std::min<double>(wanted, 8.0 * list_size);
  return std::min<std::uint32_t>(kMaxListSize,
                                 std::max<std::uint32_t>(list_size, static_cast<std::uint32_t>(std::lround(capped))));
}

std::uint32_t SearchParams::EffectiveNprobe(std::uint32_t default_nprobe) const {
  const std::uint32_t base = nprobe ? nprobe : default_nprobe;
  if (filter == nullptr || !(filter_fraction > 0.0f) || filter_fraction >= 1.0f) return base;
  const double scale = std::clamp(0.1 / filter_fraction, 1.0, 16.0);
  return static_cast<std::uint32_t>(std::ceil(base * scale - 1e-3));
}

std::vector<std::uint64_t> SampleEntryRows(std::span<const std::uint64_t> rows) {
  const std::size_t n = std::min(rows.size(), SearchParams::kMaxEntryRows);
  std::vector<std::uint64_t> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n; ++i) out.push_back(rows[i * rows.size() / n]);
  return out;
}

Status SearchParams::Validate() const {
  if (!(filter_fraction > 0.0f && filter_fraction <= 1.0f)) {
    return Status::InvalidArgument("filter_fraction must be in (0, 1]");
  }
  if (k == 0) return Status::InvalidArgument("k must be at least 1");
  if (filter_steers_walk && (filter == nullptr || entry_rows == nullptr)) {
    return Status::InvalidArgument("filter_steers_walk needs a filter and entry_rows");
  }
  if (prune_rank > k) return Status::InvalidArgument("prune rank must be at most k");
  if (k > kMaxK) {
    return Status::InvalidArgument("k " + std::to_string(k) + " is above the limit of " +
                                   std::to_string(kMaxK));
  }
  if (list_size > kMaxListSize) {
    return Status::InvalidArgument("L " + std::to_string(list_size) + " is above the limit of " +
                                   std::to_string(kMaxListSize));
  }
  if (max_expansions > kMaxExpansions) {
    return Status::InvalidArgument("max expansions " + std::to_string(max_expansions) +
                                   " is above the limit of " + std::to_string(kMaxExpansions));
  }
  if (beam_width == 0 || beam_width > 128) {
    return Status::InvalidArgument("beam width must be in 1..128");
  }
  if (min_beam_width == 0) return Status::InvalidArgument("min beam width must be at least 1");
  if (rerank_group > kMaxRerankGroup) {
    return Status::InvalidArgument("rerank group must be at most " +
                                   std::to_string(kMaxRerankGroup));
  }
  if (inflight > 256) return Status::InvalidArgument("inflight must be at most 256");
  if (!(drain_alpha > 0.0f && drain_alpha <= 1.0f)) {
    return Status::InvalidArgument("drain alpha must be in (0, 1]");
  }
  return Status::OK();
}

Status ApplySearchProfile(const std::string& profile, SearchParams* params) {
  if (profile == "baseline") {
    params->mem_graph = false;
    params->page_search = false;
    params->dynamic_width = false;
    params->pipelined = false;
  } else if (profile == "default") {
    const SearchParams defaults;
    params->mem_graph = defaults.mem_graph;
    params->mem_graph_L = defaults.mem_graph_L;
    params->page_search = defaults.page_search;
    params->dynamic_width = defaults.dynamic_width;
    params->min_beam_width = defaults.min_beam_width;
    params->pipelined = defaults.pipelined;
  } else {
    return Status::InvalidArgument("unknown profile '" + profile + "' (baseline, default)");
  }
  return Status::OK();
}

const char* IvfPipelineName(IvfPipeline p) {
  switch (p) {
    case IvfPipeline::kNaive: return "naive";
    case IvfPipeline::kCoalesced: return "coalesced";
    case IvfPipeline::kOverlapped: return "overlapped";
    case IvfPipeline::kScheduled: return "scheduled";
    case IvfPipeline::kFull: return "full";
  }
  return "?";
}

Status ParseIvfPipeline(const std::string& name, IvfPipeline* out) {
  for (IvfPipeline p : {IvfPipeline::kNaive, IvfPipeline::kCoalesced, IvfPipeline::kOverlapped,
                        IvfPipeline::kScheduled, IvfPipeline::kFull}) {
    if (name == IvfPipelineName(p)) {
      *out = p;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown IVF pipeline '" + name +
                                 "' (naive, coalesced, overlapped, scheduled, full)");
}

}  // namespace strata
