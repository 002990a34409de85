// SearchParams validation and the IVF pipeline names: shared by every index
// type's search.
#include <string>

#include "strata/search.h"

namespace strata {

Status SearchParams::Validate() const {
  if (k == 0) return Status::InvalidArgument("k must be at least 1");
  if (beam_width == 0 || beam_width > 128) {
    return Status::InvalidArgument("beam width must be in 1..128");
  }
  if (inflight > 256) return Status::InvalidArgument("inflight must be at most 256");
  if (!(drain_alpha > 0.0f && drain_alpha <= 1.0f)) {
    return Status::InvalidArgument("drain alpha must be in (0, 1]");
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
