#include "collection/pending_set.h"

#include <algorithm>
#include <new>
#include <string>

namespace strata::collection {

struct PendingSet::Chunk {
  explicit Chunk(std::uint32_t dim) : vectors(static_cast<std::size_t>(kChunkEntries) * dim) {
    for (auto& d : dead) d.store(kNeverDead, std::memory_order_relaxed);
  }
  std::vector<float> vectors;
  VectorId ids[kChunkEntries] = {};
  std::uint64_t inserted[kChunkEntries] = {};
  std::atomic<std::uint64_t> dead[kChunkEntries];
};

PendingSet::PendingSet(std::uint32_t dim, kernels::ErasedDistanceFn distance)
    : dim_(dim), distance_(distance), chunks_(new Chunk*[kMaxChunks]()) {}

PendingSet::~PendingSet() {
  for (std::uint32_t c = 0; c < chunks_allocated_; ++c) delete chunks_[c];
}

Result<std::unique_ptr<PendingSet>> PendingSet::Create(std::uint32_t dim, Metric metric) {
  if (dim == 0) return Status::InvalidArgument("pending set: dim must be > 0");
  kernels::ErasedDistanceFn fn = kernels::GetDistanceFn(metric, ElementType::kFloat32);
  if (fn == nullptr) return Status::InvalidArgument("pending set: no distance for this metric");
  return std::unique_ptr<PendingSet>(new PendingSet(dim, fn));
}

Result<std::uint32_t> PendingSet::Append(VectorId id, const float* vector, std::uint64_t seq) {
  const std::uint32_t pos = size_.load(std::memory_order_relaxed);
  const std::uint32_t c = pos / kChunkEntries;
  if (c >= kMaxChunks) {
    return Status::InvalidArgument("pending set: more than " +
                                   std::to_string(std::uint64_t{kMaxChunks} * kChunkEntries) +
                                   " pending vectors; merge first");
  }
  if (c == chunks_allocated_) {
    Chunk* chunk = new (std::nothrow) Chunk(dim_);
    if (chunk == nullptr) return Status::InvalidArgument("pending set: out of memory");
    chunks_[c] = chunk;
    ++chunks_allocated_;
  }
  Chunk* chunk = chunks_[c];
  const std::uint32_t i = pos % kChunkEntries;
  std::copy_n(vector, dim_, chunk->vectors.data() + static_cast<std::size_t>(i) * dim_);
  chunk->ids[i] = id;
  chunk->inserted[i] = seq;
  size_.store(pos + 1, std::memory_order_release);
  return pos;
}

void PendingSet::MarkDead(std::uint32_t pos, std::uint64_t seq) {
  chunks_[pos / kChunkEntries]->dead[pos % kChunkEntries].store(seq, std::memory_order_release);
}

VectorId PendingSet::id(std::uint32_t pos) const {
  return chunks_[pos / kChunkEntries]->ids[pos % kChunkEntries];
}
std::uint64_t PendingSet::insert_seq(std::uint32_t pos) const {
  return chunks_[pos / kChunkEntries]->inserted[pos % kChunkEntries];
}
std::uint64_t PendingSet::dead_seq(std::uint32_t pos) const {
  return chunks_[pos / kChunkEntries]->dead[pos % kChunkEntries].load(std::memory_order_acquire);
}
const float* PendingSet::vector(std::uint32_t pos) const {
  return chunks_[pos / kChunkEntries]->vectors.data() +
         static_cast<std::size_t>(pos % kChunkEntries) * dim_;
}

std::size_t PendingSet::MemoryBytesWith(std::uint64_t more) const {
  const std::size_t chunks = (size() + more + kChunkEntries - 1) / kChunkEntries;
  return chunks * (sizeof(Chunk) + sizeof(float) * kChunkEntries * dim_) +
         sizeof(Chunk*) * kMaxChunks;
}

void PendingSet::Scan(const float* query, std::uint64_t snapshot, std::size_t k,
                      std::vector<std::pair<float, VectorId>>* out, std::uint32_t from,
                      const IdPredicate* accept) const {
  out->clear();
  if (k == 0) return;
  const std::uint32_t n = size();
  // A bounded max-heap of the k nearest.
  auto& heap = *out;
  for (std::uint32_t pos = from; pos < n; ++pos) {
    const Chunk* chunk = chunks_[pos / kChunkEntries];
    const std::uint32_t i = pos % kChunkEntries;
    if (chunk->inserted[i] > snapshot) continue;
    if (chunk->dead[i].load(std::memory_order_acquire) <= snapshot) continue;
    const float d = distance_(query, chunk->vectors.data() + static_cast<std::size_t>(i) * dim_,
                              dim_);
    if (heap.size() == k && !(d < heap.front().first)) continue;
    if (accept != nullptr && !(*accept)(chunk->ids[i])) continue;
    if (heap.size() < k) {
      heap.emplace_back(d, chunk->ids[i]);
      std::push_heap(heap.begin(), heap.end());
    } else if (d < heap.front().first) {
      std::pop_heap(heap.begin(), heap.end());
      heap.back() = {d, chunk->ids[i]};
      std::push_heap(heap.begin(), heap.end());
    }
  }
  std::sort_heap(heap.begin(), heap.end());
}

}  // namespace strata::collection
