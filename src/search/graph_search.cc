#include "search/graph_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "base/timer.h"
#include "quant/pq/pq_adc.h"

namespace strata::search {

void NodeCache::Reserve(std::size_t nodes, std::size_t record_bytes) {
  record_bytes_ = record_bytes;
  arena_.reserve(nodes * record_bytes);
  index_.reserve(nodes);
}

void NodeCache::Add(std::uint32_t node, const std::byte* record) {
  if (index_.count(node) != 0) return;
  const std::size_t offset = arena_.size();
  arena_.insert(arena_.end(), record, record + record_bytes_);
  index_.emplace(node, offset);
}

std::size_t NodeCache::MemoryBytes() const {
  return arena_.capacity() + index_.size() * (sizeof(std::uint32_t) + sizeof(std::size_t) + 16);
}

std::size_t GraphIndexData::MemoryBytes() const {
  return pq_codes.capacity() + pq.centroids().size() * sizeof(float) * 2 + cache.MemoryBytes();
}

Result<std::unique_ptr<GraphSearchContext>> GraphSearchContext::Create(
    const GraphIndexData& index, const IoQueueOptions& io_options, std::uint32_t max_beam_width) {
  std::unique_ptr<GraphSearchContext> ctx(new GraphSearchContext(index));
  IoQueueOptions opts = io_options;
  opts.queue_depth = std::max(opts.queue_depth, max_beam_width);
  STRATA_ASSIGN_OR_RETURN(ctx->queue_, MakeIoQueue(opts));
  STRATA_ASSIGN_OR_RETURN(ctx->file_id_, ctx->queue_->AddFile(index.nodes.file()));
  const std::size_t read_bytes =
      static_cast<std::size_t>(index.nodes.layout().Locate(0).sectors) * format::kSector;
  STRATA_ASSIGN_OR_RETURN(ctx->buffers_, BufferPool::Create(max_beam_width, read_bytes));
  STRATA_RETURN_IF_ERROR(ctx->queue_->RegisterBuffers(ctx->buffers_.region()));
  ctx->max_beam_width_ = max_beam_width;
  ctx->requests_.resize(max_beam_width);
  ctx->request_ptrs_.reserve(max_beam_width);
  ctx->completed_.resize(max_beam_width);
  ctx->query_.resize(index.dim());
  ctx->vector_scratch_.resize(index.dim());
  return ctx;
}

float GraphSearchContext::ExactDistance(const float* query, std::span<const std::byte> vector) {
  const std::size_t dim = index_.dim();
  const float* x;
  switch (index_.nodes.layout().element_type) {
    case ElementType::kFloat32:
      x = reinterpret_cast<const float*>(vector.data());
      break;
    case ElementType::kFloat16:
      kernels::HalfToFloatN(reinterpret_cast<const std::uint16_t*>(vector.data()),
                            vector_scratch_.data(), dim);
      x = vector_scratch_.data();
      break;
    case ElementType::kBFloat16:
      kernels::BFloat16ToFloatN(reinterpret_cast<const std::uint16_t*>(vector.data()),
                                vector_scratch_.data(), dim);
      x = vector_scratch_.data();
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < dim; ++i) {
        vector_scratch_[i] = static_cast<float>(reinterpret_cast<const std::uint8_t*>(vector.data())[i]);
      }
      x = vector_scratch_.data();
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < dim; ++i) {
        vector_scratch_[i] = static_cast<float>(reinterpret_cast<const std::int8_t*>(vector.data())[i]);
      }
      x = vector_scratch_.data();
      break;
    default:
      return std::numeric_limits<float>::infinity();
  }
  switch (index_.metric) {
    case Metric::kL2: return index_.kernels->l2_f32(query, x, dim);
    case Metric::kInnerProduct: return -index_.kernels->ip_f32(query, x, dim);
    case Metric::kCosine: {
      // Float records were normalised at build; integer records are scored
      // with their exact cosine.
      if (index_.nodes.layout().element_type == ElementType::kFloat32 ||
          index_.nodes.layout().element_type == ElementType::kFloat16 ||
          index_.nodes.layout().element_type == ElementType::kBFloat16) {
        return 1.0f - index_.kernels->ip_f32(query, x, dim);
      }
      const float xx = kernels::SquaredNorm(x, dim);
      return xx == 0.0f ? 1.0f : 1.0f - index_.kernels->ip_f32(query, x, dim) / std::sqrt(xx);
    }
  }
  return std::numeric_limits<float>::infinity();
}

void GraphSearchContext::OfferNeighbours(const format::NodeRecordView& record,
                                         QueryStats* stats) {
  fresh_.clear();
  for (std::uint32_t j = 0; j < record.degree; ++j) {
    const auto nb = static_cast<std::uint32_t>(record.neighbour(j));
    if (nb < index_.num_nodes() && visited_.Insert(nb)) fresh_.push_back(nb);
  }
  if (fresh_.empty()) return;
  const std::size_t m = index_.pq.code_size();
  fresh_codes_.resize(fresh_.size() * m);
  for (std::size_t i = 0; i < fresh_.size(); ++i) {
    std::copy_n(index_.code(fresh_[i]), m, fresh_codes_.data() + i * m);
  }
  fresh_dists_.resize(fresh_.size());
  quant::ComputeDistances(table_, fresh_codes_.data(), fresh_.size(), fresh_dists_.data());
  stats->pq_distances += static_cast<std::uint32_t>(fresh_.size());
  for (std::size_t i = 0; i < fresh_.size(); ++i) candidates_.Insert(fresh_[i], fresh_dists_[i]);
}

Status GraphSearchContext::Search(std::span<const float> query, const SearchParams& params,
                                  std::span<VectorId> ids, std::span<float> distances,
                                  QueryStats* stats) {
  const Timer timer;
  *stats = QueryStats{};
  STRATA_RETURN_IF_ERROR(params.Validate());
  if (params.list_size < params.k) {
    return Status::InvalidArgument("L (" + std::to_string(params.list_size) +
                                   ") must be at least k (" + std::to_string(params.k) + ")");
  }
  if (query.size() != index_.dim()) {
    return Status::InvalidArgument("query has dimension " + std::to_string(query.size()) +
                                   ", the index " + std::to_string(index_.dim()));
  }
  if (params.beam_width > max_beam_width_) {
    return Status::InvalidArgument("beam width " + std::to_string(params.beam_width) +
                                   " exceeds this context's maximum " +
                                   std::to_string(max_beam_width_));
  }
  if (ids.size() < params.k || distances.size() < params.k) {
    return Status::InvalidArgument("result buffers smaller than k");
  }
  for (float v : query) {
    if (!std::isfinite(v)) return Status::InvalidArgument("query contains NaN or Inf");
  }
  std::copy(query.begin(), query.end(), query_.begin());
  if (index_.metric == Metric::kCosine) kernels::NormalizeInPlace(query_.data(), query_.size());
  STRATA_RETURN_IF_ERROR(index_.pq.ComputeDistanceTable(query_.data(), index_.metric, &table_));

  const format::GraphLayout& layout = index_.nodes.layout();
  const std::uint32_t max_expansions =
      params.max_expansions ? params.max_expansions : std::max(4 * params.list_size, 32u);
  candidates_.Reset(params.list_size);
  visited_.Clear();
  fetched_.clear();
  visited_.Insert(index_.entry_point);
  candidates_.Insert(index_.entry_point,
                     quant::ComputeDistance(table_, index_.code(index_.entry_point)));
  ++stats->pq_distances;

  format::NodeRecordView record;
  auto expand = [&](std::uint32_t node, const format::NodeRecordView& rec) {
    fetched_.push_back({node, ExactDistance(query_.data(), rec.vector)});
    ++stats->full_distances;
    OfferNeighbours(rec, stats);
  };

  std::vector<std::uint32_t> beam;
  beam.reserve(params.beam_width);
  while (candidates_.HasUnexpanded() && stats->expanded < max_expansions) {
    beam.clear();
    while (beam.size() < params.beam_width && candidates_.HasUnexpanded()) {
      beam.push_back(candidates_.ExpandNext().id);
    }
    ++stats->hops;
    // Cached nodes are expanded from RAM; the rest are read in one batch.
    request_ptrs_.clear();
    for (std::uint32_t node : beam) {
      ++stats->expanded;
      if (const std::byte* cached = index_.cache.Find(node)) {
        ++stats->cache_hits;
        // A cached record is contiguous (gathered at load), so decode it as a
        // single-sector record at offset 0.
        format::RecordLocation flat;
        flat.sectors = 1;
        STRATA_RETURN_IF_ERROR(format::DecodeRecord(
            layout, flat, std::span<const std::byte>(cached, layout.record_bytes),
            &record_scratch_, &record));
        expand(node, record);
        continue;
      }
      const format::RecordLocation loc = layout.Locate(node);
      IoRequest& r = requests_[request_ptrs_.size()];
      r = IoRequest{};
      r.file = file_id_;
      r.offset = loc.sector * format::kSector;
      r.length = loc.sectors * static_cast<std::uint32_t>(format::kSector);
      r.buffer = buffers_.buffer(request_ptrs_.size());
      r.tag = node;
      request_ptrs_.push_back(&r);
    }
    if (request_ptrs_.empty()) continue;
    STRATA_RETURN_IF_ERROR(queue_->Submit(request_ptrs_));
    stats->reads += static_cast<std::uint32_t>(request_ptrs_.size());
    std::size_t done = 0;
    const Timer io_timer;
    while (done < request_ptrs_.size()) {
      STRATA_ASSIGN_OR_RETURN(std::size_t n,
                              queue_->Wait(completed_, request_ptrs_.size() - done));
      done += n;
    }
    stats->io_wait_us += io_timer.ElapsedMicros();
    // Expand in beam order (not completion order) so results do not depend on
    // I/O timing: identical across runs and thread counts.
    for (IoRequest* r : request_ptrs_) {
      STRATA_RETURN_IF_ERROR(r->status.WithContext(index_.nodes.path()));
      const auto node = static_cast<std::uint32_t>(r->tag);
      const format::RecordLocation loc = layout.Locate(node);
      stats->pages_read += loc.sectors;
      STRATA_RETURN_IF_ERROR(index_.nodes.Decode(
          loc, std::span<const std::byte>(r->buffer, r->length), &record_scratch_, &record));
      // Decode's view points at the record's offset inside its sector.
      expand(node, record);
    }
  }

  std::sort(fetched_.begin(), fetched_.end(), graph::NeighborLess);
  const std::size_t found = std::min<std::size_t>(params.k, fetched_.size());
  for (std::size_t i = 0; i < params.k; ++i) {
    ids[i] = i < found ? fetched_[i].id : kInvalidVectorId;
    distances[i] = i < found ? fetched_[i].distance : std::numeric_limits<float>::infinity();
  }
  stats->latency_us = timer.ElapsedMicros();
  return Status::OK();
}

}  // namespace strata::search
