#include "index/node_cache_loader.h"

#include <algorithm>
#include <deque>
#include <numeric>
#include <vector>

#include "base/aligned_buffer.h"
#include "base/random.h"
#include "search/graph_search.h"

namespace strata {
namespace {

// Reads slot's record and returns a view into `buffer` / `scratch`.
Status ReadRecord(const search::GraphIndexData& data, std::uint32_t slot, AlignedBuffer* buffer,
                  std::vector<std::byte>* scratch, format::NodeRecordView* view) {
  const format::RecordLocation loc = data.nodes.layout().Locate(slot);
  STRATA_RETURN_IF_ERROR(data.nodes.ReadSectors(
      loc.sector, loc.sectors, std::span<std::byte>(buffer->data(), buffer->size())));
  return data.nodes.Decode(slot, loc, std::span<const std::byte>(buffer->data(), buffer->size()),
                           scratch, view);
}

// Copies a decoded record's bytes (contiguous from its vector on) to the cache.
void AddToCache(search::GraphIndexData* data, std::uint32_t slot,
                const format::NodeRecordView& view) {
  data->cache.Add(slot, view.vector.data());
}

// The `count` slots nearest the entry point by BFS hops.
Status CollectBfs(const search::GraphIndexData& data, std::uint64_t count,
                  std::vector<std::uint32_t>* out) {
  const format::GraphLayout& layout = data.nodes.layout();
  AlignedBuffer buffer(static_cast<std::size_t>(layout.Locate(0).sectors) * format::kSector);
  std::vector<std::byte> scratch;
  std::vector<std::uint8_t> seen(layout.num_slots, 0);
  std::deque<std::uint32_t> frontier{data.entry_point};
  seen[data.entry_point] = 1;
  while (!frontier.empty() && out->size() < count) {
    const std::uint32_t slot = frontier.front();
    frontier.pop_front();
    format::NodeRecordView view;
    STRATA_RETURN_IF_ERROR(ReadRecord(data, slot, &buffer, &scratch, &view));
    out->push_back(slot);
    for (std::uint32_t j = 0; j < view.degree; ++j) {
      const auto nb = static_cast<std::uint32_t>(view.neighbour(j));
      if (nb < layout.num_slots && !seen[nb]) {
        seen[nb] = 1;
        frontier.push_back(nb);
      }
    }
  }
  return Status::OK();
}

// The `count` slots expanded most often by warm-up queries: the vectors of
// random nodes, searched with DiskANN's beam (L 50, W 4) from the medoid, so
// the counts reflect where searches actually go.
Status CollectFrequent(const search::GraphIndexData& data, std::uint64_t count,
                       const OpenOptions& options, std::vector<std::uint32_t>* out) {
  const format::GraphLayout& layout = data.nodes.layout();
  const std::uint32_t dim = layout.dim;
  AlignedBuffer buffer(static_cast<std::size_t>(layout.Locate(0).sectors) * format::kSector);
  std::vector<std::byte> scratch;
  Xoshiro256 rng(0x63616368ull);
  const std::uint32_t num_queries = std::max<std::uint32_t>(1, options.cache_warmup_queries);
  IoQueueOptions io;
  io.engine = options.io_engine;
  STRATA_ASSIGN_OR_RETURN(auto context, search::GraphSearchContext::Create(data, io, 4));
  std::vector<std::uint32_t> trace;
  context->SetTrace(&trace);
  std::vector<std::uint32_t> hits(layout.num_slots, 0);
  SearchParams params;
  params.k = 10;
  params.list_size = 50;
  params.beam_width = 4;
  params.mem_graph = false;
  params.page_search = false;
  params.dynamic_width = false;
  std::vector<float> query(dim);
  std::vector<VectorId> ids(params.k);
  std::vector<float> dists(params.k);
  for (std::uint32_t q = 0; q < num_queries; ++q) {
    std::uint32_t slot;
    format::NodeRecordView view;
    do {
      slot = static_cast<std::uint32_t>(rng.Next() % layout.num_slots);
      STRATA_RETURN_IF_ERROR(ReadRecord(data, slot, &buffer, &scratch, &view));
    } while (view.external_id == kInvalidVectorId);
    for (std::uint32_t i = 0; i < dim; ++i) {
      switch (layout.element_type) {
        case ElementType::kFloat32:
          query[i] = reinterpret_cast<const float*>(view.vector.data())[i];
          break;
        case ElementType::kUint8:
          query[i] = reinterpret_cast<const std::uint8_t*>(view.vector.data())[i];
          break;
        case ElementType::kInt8:
          query[i] = reinterpret_cast<const std::int8_t*>(view.vector.data())[i];
          break;
        case ElementType::kFloat16:
          query[i] = kernels::HalfToFloat(reinterpret_cast<const std::uint16_t*>(view.vector.data())[i]);
          break;
        case ElementType::kBFloat16:
          query[i] =
              kernels::BFloat16ToFloat(reinterpret_cast<const std::uint16_t*>(view.vector.data())[i]);
          break;
      }
    }
    trace.clear();
    QueryStats stats;
    STRATA_RETURN_IF_ERROR(context->Search(query, params, ids, dists, &stats));
    for (std::uint32_t s : trace) ++hits[s];
  }
  std::vector<std::uint32_t> order(layout.num_slots);
  std::iota(order.begin(), order.end(), 0u);
  count = std::min<std::uint64_t>(count, order.size());
  std::partial_sort(order.begin(), order.begin() + count, order.end(),
                    [&](std::uint32_t a, std::uint32_t b) {
                      return hits[a] > hits[b] || (hits[a] == hits[b] && a < b);
                    });
  for (std::uint64_t i = 0; i < count && hits[order[i]] > 0; ++i) out->push_back(order[i]);
  return Status::OK();
}

}  // namespace

Status LoadNodeCache(search::GraphIndexData* data, const OpenOptions& options) {
  const format::GraphLayout& layout = data->nodes.layout();
  std::uint64_t count = options.cache_nodes;
  if (options.cache_mib > 0) count = (options.cache_mib << 20) / layout.record_bytes;
  count = std::min<std::uint64_t>(count, layout.num_nodes);
  if (count == 0) return Status::OK();
  std::vector<std::uint32_t> slots;
  if (options.cache_policy == CachePolicy::kFrequency) {
    STRATA_RETURN_IF_ERROR(CollectFrequent(*data, count, options, &slots));
  } else {
    STRATA_RETURN_IF_ERROR(CollectBfs(*data, count, &slots));
  }
  data->cache.Reserve(slots.size(), layout.record_bytes);
  AlignedBuffer buffer(static_cast<std::size_t>(layout.Locate(0).sectors) * format::kSector);
  std::vector<std::byte> scratch;
  for (std::uint32_t slot : slots) {
    format::NodeRecordView view;
    STRATA_RETURN_IF_ERROR(ReadRecord(*data, slot, &buffer, &scratch, &view));
    AddToCache(data, slot, view);
  }
  return Status::OK();
}

}  // namespace strata
