#include "graph/node_labels.h"

#include <algorithm>
#include <limits>
#include <string>

#include "base/parallel.h"

namespace strata::graph {

bool NodeLabels::Share(NodeId a, NodeId b) const {
  const auto x = Of(a);
  const auto y = Of(b);
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    if (x[i] == y[j]) return true;
    if (x[i] < y[j]) {
      ++i;
    } else {
      ++j;
    }
  }
  return false;
}

bool NodeLabels::SharedCoveredBy(NodeId p, NodeId c, NodeId s) const {
  const auto x = Of(p);
  const auto y = Of(c);
  const auto z = Of(s);
  std::size_t i = 0, j = 0, k = 0;
  while (i < x.size() && j < y.size()) {
    if (x[i] < y[j]) {
      ++i;
    } else if (y[j] < x[i]) {
      ++j;
    } else {
      // A label p and c share: s must carry it too.
      while (k < z.size() && z[k] < x[i]) ++k;
      if (k == z.size() || z[k] != x[i]) return false;
      ++i;
      ++j;
    }
  }
  return true;
}

bool NodeLabels::HasAll(NodeId i, std::span<const std::uint32_t> required) const {
  const auto x = Of(i);
  std::size_t k = 0;
  for (const std::uint32_t want : required) {
    while (k < x.size() && x[k] < want) ++k;
    if (k == x.size() || x[k] != want) return false;
  }
  return true;
}

std::uint32_t NodeLabels::LabelBound() const {
  std::uint32_t bound = 0;
  for (const std::uint32_t l : labels) bound = std::max(bound, l + 1);
  return bound;
}

Status NodeLabels::Validate(std::uint64_t nodes) const {
  auto bad = [](const std::string& what) { return Status::InvalidArgument("node labels: " + what); };
  if (offsets.size() != nodes + 1) {
    return bad(std::to_string(offsets.size()) + " offsets for " + std::to_string(nodes) +
               " nodes (want nodes + 1)");
  }
  if (offsets.front() != 0 || offsets.back() != labels.size()) {
    return bad("offsets must run from 0 to the label count " + std::to_string(labels.size()));
  }
  for (std::uint64_t i = 0; i < nodes; ++i) {
    if (offsets[i + 1] < offsets[i]) return bad("offsets decrease at node " + std::to_string(i));
    for (std::uint64_t j = offsets[i] + 1; j < offsets[i + 1]; ++j) {
      if (labels[j] <= labels[j - 1]) {
        return bad("node " + std::to_string(i) + "'s labels are not strictly ascending");
      }
    }
    if (offsets[i + 1] > offsets[i] && labels[offsets[i + 1] - 1] ==
                                           std::numeric_limits<std::uint32_t>::max()) {
      return bad("label 2^32 - 1 is reserved");
    }
  }
  return Status::OK();
}

std::vector<NodeId> ComputeLabelStartPoints(const VectorView& v, const NodeLabels& labels,
                                            std::uint32_t num_threads) {
  const std::uint32_t bound = labels.LabelBound();
  std::vector<NodeId> start(bound, kInvalidNode);
  if (bound == 0) return start;
  const auto n = static_cast<NodeId>(v.size());
  const std::size_t dim = v.dim();
  // Inverted lists: the nodes of each label, ascending.
  std::vector<std::uint64_t> head(bound + 1, 0);
  for (const std::uint32_t l : labels.labels) ++head[l + 1];
  for (std::uint32_t l = 0; l < bound; ++l) head[l + 1] += head[l];
  std::vector<NodeId> members(labels.labels.size());
  {
    std::vector<std::uint64_t> fill(head.begin(), head.end() - 1);
    for (NodeId i = 0; i < n; ++i) {
      for (const std::uint32_t l : labels.Of(i)) members[fill[l]++] = i;
    }
  }
  // Per label: the mean of its members (in double, in member order, so the
  // result does not depend on the thread count), then the member nearest it.
  ParallelFor(
      bound, num_threads,
      [&](std::size_t l, unsigned) {
        const std::uint64_t b = head[l], e = head[l + 1];
        if (b == e) return;
        std::vector<double> sum(dim, 0.0);
        for (std::uint64_t m = b; m < e; ++m) {
          const float* row = v.Row(members[m]);
          for (std::size_t d = 0; d < dim; ++d) sum[d] += row[d];
        }
        std::vector<float> mean(dim);
        for (std::size_t d = 0; d < dim; ++d) {
          mean[d] = static_cast<float>(sum[d] / static_cast<double>(e - b));
        }
        float best = std::numeric_limits<float>::infinity();
        for (std::uint64_t m = b; m < e; ++m) {
          const float* row = v.Row(members[m]);
          float dist = 0.0f;
          for (std::size_t d = 0; d < dim; ++d) {
            const float t = row[d] - mean[d];
            dist += t * t;
          }
          if (dist < best) {
            best = dist;
            start[l] = members[m];
          }
        }
      },
      /*grain=*/1);
  return start;
}

}  // namespace strata::graph
