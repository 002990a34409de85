#include "graph/graph_options.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace strata::graph {

Status VamanaBuildOptions::Validate() const {
  auto bad = [](const std::string& what) {
    return Status::InvalidArgument("VamanaBuildOptions: " + what);
  };
  if (metric != Metric::kL2 && metric != Metric::kInnerProduct && metric != Metric::kCosine) {
    return bad("unknown metric");
  }
  // The upper bounds keep slot arrays and per-prune scratch sane; real
  // deployments use R <= 256 and L <= a few thousand.
  if (max_degree < 1 || max_degree > 4096) {
    return bad("max_degree (R) must be in [1, 4096], got " + std::to_string(max_degree));
  }
  if (search_list_size < 1 || search_list_size > 100000) {
    return bad("search_list_size (L_build) must be in [1, 100000], got " +
               std::to_string(search_list_size));
  }
  if (!std::isfinite(alpha) || alpha < 1.0f || alpha > 16.0f) {
    return bad("alpha must be in [1, 16], got " + std::to_string(alpha));
  }
  if (!std::isfinite(slack_factor) || slack_factor < 1.0f || slack_factor > 4.0f) {
    return bad("slack_factor must be in [1, 4], got " + std::to_string(slack_factor));
  }
  if (max_occlusion_size < max_degree) {
    return bad("max_occlusion_size (C) must be >= max_degree, got " +
               std::to_string(max_occlusion_size));
  }
  if (num_passes != 1 && num_passes != 2) {
    return bad("num_passes must be 1 or 2, got " + std::to_string(num_passes));
  }
  if (alpha_schedule != AlphaSchedule::kRising && alpha_schedule != AlphaSchedule::kFixed) {
    return bad("unknown alpha_schedule");
  }
  if (num_threads > 4096) return bad("num_threads must be <= 4096");
  return Status::OK();
}

std::uint32_t VamanaBuildOptions::SlackDegree() const {
  const double slots = std::floor(static_cast<double>(slack_factor) * max_degree);
  return std::max<std::uint32_t>(max_degree, static_cast<std::uint32_t>(slots));
}

}  // namespace strata::graph
