#include "search/mem_graph.h"

#include <cstring>
#include <string>

#include "graph/vamana_builder.h"

namespace strata::search {
namespace {

template <typename T>
std::vector<std::uint8_t> Bytes(std::span<const T> v) {
  std::vector<std::uint8_t> out(v.size_bytes());
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <typename T>
bool FromBytes(const std::vector<std::uint8_t>& in, std::size_t count, std::vector<T>* out) {
  if (in.size() != count * sizeof(T)) return false;
  out->resize(count);
  if (count) std::memcpy(out->data(), in.data(), in.size());
  return true;
}

}  // namespace

Result<MemGraph> MemGraph::Create(std::uint32_t dim, Metric metric, std::vector<float> vectors,
                                  graph::FlatAdjacency adjacency, std::uint32_t entry,
                                  std::vector<std::uint32_t> slots) {
  const std::size_t m = slots.size();
  if (m == 0 || dim == 0 || vectors.size() != m * dim || adjacency.size() != m || entry >= m) {
    return Status::InvalidArgument("memgraph: inconsistent sizes");
  }
  for (std::uint32_t i = 0; i < m; ++i) {
    for (graph::NodeId nb : adjacency.Neighbors(i)) {
      if (nb >= m) return Status::InvalidArgument("memgraph: neighbour id out of range");
    }
  }
  MemGraph g;
  g.dim_ = dim;
  g.metric_ = metric;
  g.vectors_ = std::move(vectors);
  g.adjacency_ = std::move(adjacency);
  g.entry_ = entry;
  g.slots_ = std::move(slots);
  STRATA_ASSIGN_OR_RETURN(g.view_, graph::VectorView::Create(g.vectors_, dim, metric));
  return g;
}

std::vector<std::vector<std::uint8_t>> MemGraph::Serialize() const {
  const std::uint32_t m = size();
  const std::uint32_t cap = adjacency_.capacity();
  const std::uint32_t meta[5] = {dim_, static_cast<std::uint32_t>(metric_), m, entry_, cap};
  std::vector<std::uint32_t> words;
  words.reserve(static_cast<std::size_t>(m) * (cap + 1));
  for (std::uint32_t i = 0; i < m; ++i) {
    const auto nbrs = adjacency_.Neighbors(i);
    words.push_back(static_cast<std::uint32_t>(nbrs.size()));
    words.insert(words.end(), nbrs.begin(), nbrs.end());
    words.resize(words.size() + (cap - nbrs.size()), 0);
  }
  return {Bytes(std::span<const std::uint32_t>(meta, 5)), Bytes(std::span<const float>(vectors_)),
          Bytes(std::span<const std::uint32_t>(words)),
          Bytes(std::span<const std::uint32_t>(slots_))};
}

Result<MemGraph> MemGraph::Deserialize(const std::vector<std::vector<std::uint8_t>>& sections) {
  auto bad = [](const char* what) { return Status::Corruption(std::string("memgraph: ") + what); };
  if (sections.size() != 4) return bad("wrong section count");
  std::vector<std::uint32_t> meta;
  if (!FromBytes(sections[0], 5, &meta)) return bad("bad header");
  const std::uint32_t dim = meta[0], m = meta[2], entry = meta[3], cap = meta[4];
  if (meta[1] > static_cast<std::uint32_t>(Metric::kCosine) || dim == 0 || m == 0 || cap == 0 ||
      cap > 4096) {
    return bad("bad header");
  }
  std::vector<float> vectors;
  std::vector<std::uint32_t> words, slots;
  if (!FromBytes(sections[1], static_cast<std::size_t>(m) * dim, &vectors)) return bad("vectors");
  if (!FromBytes(sections[2], static_cast<std::size_t>(m) * (cap + 1), &words)) return bad("graph");
  if (!FromBytes(sections[3], m, &slots)) return bad("slots");
  auto adjacency = graph::FlatAdjacency::Create(m, cap);
  if (!adjacency.ok()) return bad("graph allocation");
  for (std::uint32_t i = 0; i < m; ++i) {
    const std::uint32_t* w = words.data() + static_cast<std::size_t>(i) * (cap + 1);
    if (w[0] > cap) return bad("degree above capacity");
    for (std::uint32_t j = 0; j < w[0]; ++j) {
      if (w[1 + j] >= m) return bad("neighbour out of range");
    }
    adjacency->Set(i, std::span<const std::uint32_t>(w + 1, w[0]));
  }
  auto g = Create(dim, static_cast<Metric>(meta[1]), std::move(vectors), std::move(*adjacency),
                  entry, std::move(slots));
  if (!g.ok()) return bad(g.status().message().c_str());
  return g;
}

Result<MemGraph> MemGraph::Extended(std::span<const float> more,
                                    std::span<const std::uint32_t> more_slots,
                                    std::uint32_t list_size, float alpha) const {
  const std::uint32_t m = size();
  const auto add = static_cast<std::uint32_t>(more_slots.size());
  if (more.size() != static_cast<std::size_t>(add) * dim_) {
    return Status::InvalidArgument("memgraph: " + std::to_string(more.size()) + " values for " +
                                   std::to_string(add) + " nodes");
  }
  std::vector<float> vectors;
  vectors.reserve(vectors_.size() + more.size());
  vectors.insert(vectors.end(), vectors_.begin(), vectors_.end());
  vectors.insert(vectors.end(), more.begin(), more.end());
  const std::uint32_t degree = adjacency_.capacity();
  STRATA_ASSIGN_OR_RETURN(graph::FlatAdjacency adjacency,
                          graph::FlatAdjacency::Create(m + add, degree));
  for (std::uint32_t i = 0; i < m; ++i) adjacency.Set(i, adjacency_.Neighbors(i));
  STRATA_ASSIGN_OR_RETURN(graph::VectorView view,
                          graph::VectorView::Create(vectors, dim_, metric_));
  {
    graph::VamanaInserter inserter(view, &adjacency, std::max(list_size, degree), 1);
    std::vector<graph::NodeId> order(add);
    for (std::uint32_t i = 0; i < add; ++i) order[i] = m + i;
    graph::PruneParams params;
    params.max_degree = degree;
    params.alpha = alpha;
    inserter.Insert(order, entry_, params);
  }
  std::vector<std::uint32_t> slots(slots_);
  slots.insert(slots.end(), more_slots.begin(), more_slots.end());
  return Create(dim_, metric_, std::move(vectors), std::move(adjacency), entry_, std::move(slots));
}

std::size_t MemGraph::MemoryBytes() const {
  return vectors_.capacity() * sizeof(float) + adjacency_.MemoryBytes() +
         slots_.capacity() * sizeof(std::uint32_t);
}

std::uint64_t MemGraph::Walker::Search(const float* query, std::uint32_t list_size,
                                       std::uint32_t count, std::vector<std::uint32_t>* out) {
  const graph::NodeId entry = graph_.entry_;
  const graph::SearchCounters c =
      searcher_.Search(query, std::span<const graph::NodeId>(&entry, 1), list_size);
  out->clear();
  const graph::CandidateList& r = searcher_.Results();
  for (std::size_t i = 0; i < r.size() && out->size() < count; ++i) {
    out->push_back(r[i].id);
  }
  return c.distance_computations;
}

}  // namespace strata::search
