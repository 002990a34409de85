#include "search/graph_search.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "base/timer.h"
#include "quant/pq/pq_adc.h"
#include "search/graph_query.h"

namespace strata::search {

void NodeCache::Reserve(std::size_t nodes, std::size_t record_bytes) {
  record_bytes_ = record_bytes;
  arena_.reserve(nodes * record_bytes);
  index_.reserve(nodes);
}

void NodeCache::Add(std::uint32_t slot, const std::byte* record) {
  if (index_.count(slot) != 0) return;
  const std::size_t offset = arena_.size();
  arena_.insert(arena_.end(), record, record + record_bytes_);
  index_.emplace(slot, offset);
}

std::size_t NodeCache::MemoryBytes() const {
  return arena_.capacity() + index_.size() * (sizeof(std::uint32_t) + sizeof(std::size_t) + 16);
}

std::size_t GraphIndexData::MemoryBytes() const {
  return pq_codes.capacity() +
         (slot_of_row.capacity() + label_start_rows.capacity() + row_of_slot.capacity()) *
             sizeof(std::uint32_t) +
         pq.centroids().size() * sizeof(float) +
         pq.rotation().size() * sizeof(float) + entry_code.capacity() + mem_graph.MemoryBytes() +
         mem_graph_codes.capacity() + cache.MemoryBytes();
}

GraphSearchContext::GraphSearchContext(const GraphIndexData& index)
    : index_(index),
      layout_(index.nodes.layout()),
      record_distance_(index.metric, index.nodes.layout().element_type, index.dim(),
                       index.kernels) {}

Result<std::unique_ptr<GraphSearchContext>> GraphSearchContext::Create(
    const GraphIndexData& index, const IoQueueOptions& io_options, std::uint32_t max_beam_width) {
  if (max_beam_width == 0 || max_beam_width > 128) {
    return Status::InvalidArgument("max beam width must be in 1..128");
  }
  std::unique_ptr<GraphSearchContext> ctx(new GraphSearchContext(index));
  IoQueueOptions opts = io_options;
  opts.queue_depth = std::max(opts.queue_depth, max_beam_width);
  STRATA_ASSIGN_OR_RETURN(ctx->queue_, MakeIoQueue(opts));
  STRATA_ASSIGN_OR_RETURN(ctx->file_id_, ctx->queue_->AddFile(index.nodes.file()));
  const std::size_t read_bytes =
      static_cast<std::size_t>(ctx->layout_.Locate(0).sectors) * format::kSector;
  STRATA_ASSIGN_OR_RETURN(ctx->buffers_, BufferPool::Create(max_beam_width, read_bytes));
  STRATA_RETURN_IF_ERROR(ctx->queue_->RegisterBuffers(ctx->buffers_.region()));
  ctx->max_beam_width_ = max_beam_width;
  ctx->requests_.resize(max_beam_width);
  ctx->completed_.resize(max_beam_width);
  ctx->query_.resize(index.dim());
  if (!index.mem_graph.empty()) ctx->walker_.emplace(index.mem_graph);
  return ctx;
}

Status GraphSearchContext::Prepare(std::span<const float> query, const SearchParams& params,
                                   std::size_t result_slots, QueryStats* stats) {
  *stats = QueryStats{};
  STRATA_RETURN_IF_ERROR(
      PrepareGraphQuery(index_, query, params, max_beam_width_, result_slots, &query_, &table_));
  list_.Reset(params.list_size);
  offered_.Clear();
  expanded_.Clear();
  pages_.Clear();
  results_.clear();
  filter_ = params.filter;
  pending_.clear();
  free_buffers_.clear();
  for (std::uint32_t b = max_beam_width_; b > 0; --b) free_buffers_.push_back(b - 1);
  width_ = params.dynamic_width ? std::min(params.min_beam_width, params.beam_width)
                                : params.beam_width;
  converged_ = false;
  rows_seedable_ = index_.resident_codes() && index_.rows_mappable();
  restricted_ = params.restrict_to != nullptr && rows_seedable_;
  if (restricted_ && params.exact_scan_patience > 0) {
    // The exact scan's reads do not depend on one another, so a whole group
    // of `exact_scan_patience` records is read at once and the convergence
    // test runs between groups (NAVIS's speculative re-ranking, Sun et al.:
    // groups of s vectors in code order). Synth 1M, 0.1 % filter: 32 pages
    // instead of 28.7 at 1.7 ms p50 instead of 2.3-2.6 (bench/results/
    // filter_synth1m_2026-12-03.md).
    width_ = std::min(max_beam_width_, std::max(width_, params.exact_scan_patience));
  }
  // A label graph's walk stays among passing rows (Filtered-DiskANN); only
  // where its rows map to slots and it has entry rows to start from.
  steered_ = params.filter_steers_walk && filter_ != nullptr && params.entry_rows != nullptr &&
             !index_.label_start_rows.empty() && rows_seedable_ && !restricted_;
  top_.clear();
  top_k_ = params.k;
  unchanged_run_ = 0;
  reads_in_ = reads_total_ = 0;
  taken_ = 0;
  recent_distances_.clear();
  cached_pending_.clear();
  return Status::OK();
}

void GraphSearchContext::Seed(const SearchParams& params, QueryStats* stats) {
  if (steered_) {
    // From the queried labels' start rows only: the MemGraph's seeds and the
    // index's entry point usually fail the filter and lead away from its rows.
    SeedEntryRows(params, stats);
    return;
  }
  if (params.mem_graph && walker_) {
    const std::uint32_t mem_l = params.mem_graph_L ? params.mem_graph_L
                                                   : std::max<std::uint32_t>(params.k, 16);
    stats->mem_graph_distances +=
        static_cast<std::uint32_t>(walker_->Search(query_.data(), mem_l, mem_l, &seeds_));
    const std::size_t m = index_.pq.code_size();
    for (std::uint32_t s : seeds_) {
      const std::uint32_t slot = index_.mem_graph.slots()[s];
      if (!offered_.Insert(slot)) continue;
      const std::uint8_t* code = index_.resident_codes()
                                     ? index_.code(slot)
                                     : index_.mem_graph_codes.data() + static_cast<std::size_t>(s) * m;
      list_.Insert(slot, quant::ComputeDistance(table_, code));
      ++stats->pq_distances;
    }
    if (params.entry_rows != nullptr && rows_seedable_) SeedEntryRows(params, stats);
    if (list_.size() > 0) return;
  }
  if (params.entry_rows != nullptr && rows_seedable_) SeedEntryRows(params, stats);
  offered_.Insert(index_.entry_point);
  list_.Insert(index_.entry_point, quant::ComputeDistance(table_, index_.entry_code.data()));
  ++stats->pq_distances;
}

void GraphSearchContext::SeedRestricted(const SearchParams& params, QueryStats* stats) {
  SeedRows(*params.restrict_to, stats);
}

void GraphSearchContext::SeedEntryRows(const SearchParams& params, QueryStats* stats) {
  const std::vector<std::uint64_t>& rows = *params.entry_rows;
  SeedRows(std::span<const std::uint64_t>(rows.data(),
                                          std::min(rows.size(), SearchParams::kMaxEntryRows)),
           stats);
}

void GraphSearchContext::SeedRows(std::span<const std::uint64_t> rows, QueryStats* stats) {
  const std::size_t m = index_.pq.code_size();
  constexpr std::size_t kBatch = 256;
  for (std::size_t begin = 0; begin < rows.size(); begin += kBatch) {
    const std::size_t end = std::min(rows.size(), begin + kBatch);
    fresh_.clear();
    for (std::size_t i = begin; i < end; ++i) {
      if (rows[i] >= index_.num_nodes()) continue;
      const std::uint32_t slot = index_.SlotOfRow(rows[i]);
      if (offered_.Insert(slot)) fresh_.push_back(slot);
    }
    fresh_codes_.resize(fresh_.size() * m);
    for (std::size_t i = 0; i < fresh_.size(); ++i) {
      std::memcpy(fresh_codes_.data() + i * m, index_.code(fresh_[i]), m);
    }
    fresh_dists_.resize(fresh_.size());
    quant::ComputeDistances(table_, fresh_codes_.data(), fresh_.size(), fresh_dists_.data());
    stats->pq_distances += static_cast<std::uint32_t>(fresh_.size());
    for (std::size_t i = 0; i < fresh_.size(); ++i) list_.Insert(fresh_[i], fresh_dists_[i]);
  }
}

void GraphSearchContext::OfferNeighbours(const format::NodeRecordView& record,
                                         QueryStats* stats) {
  fresh_.clear();
  const std::size_t m = index_.pq.code_size();
  const bool resident = index_.resident_codes();
  fresh_codes_.clear();
  fresh_slots_in_record_.clear();
  for (std::uint32_t j = 0; j < record.degree; ++j) {
    const auto nb = static_cast<std::uint32_t>(record.neighbour(j));
    if (nb >= index_.num_slots() || expanded_.Contains(nb) || !offered_.Insert(nb)) continue;
    fresh_.push_back(nb);
    fresh_slots_in_record_.push_back(j);
    // Codes in RAM are scattered over num_slots * m bytes: each one is a cache
    // miss. Prefetch them all first so the misses overlap instead of being
    // paid one after another in the gather below.
    if (resident) {
      const std::uint8_t* code = index_.code(nb);
      __builtin_prefetch(code);
      __builtin_prefetch(code + m - 1);
    }
  }
  if (fresh_.empty()) return;
  fresh_codes_.resize(fresh_.size() * m);
  for (std::size_t i = 0; i < fresh_.size(); ++i) {
    const std::uint8_t* code =
        resident ? index_.code(fresh_[i])
                 : record.codes + static_cast<std::size_t>(fresh_slots_in_record_[i]) * m;
    std::memcpy(fresh_codes_.data() + i * m, code, m);
  }
  fresh_dists_.resize(fresh_.size());
  quant::ComputeDistances(table_, fresh_codes_.data(), fresh_.size(), fresh_dists_.data());
  stats->pq_distances += static_cast<std::uint32_t>(fresh_.size());
  for (std::size_t i = 0; i < fresh_.size(); ++i) {
    // A steered walk offers only passing neighbours. The filter is judged
    // after the code distance and only for those the list would keep: a
    // check costs cache misses in the caller's label data, and most
    // neighbours late in a walk are too far to enter the list anyway. Judged
    // once per query: the slot stays in offered_ either way.
    if (steered_ && (!list_.WouldKeep(fresh_dists_[i]) || !PassesFilter(fresh_[i]))) continue;
    list_.Insert(fresh_[i], fresh_dists_[i]);
  }
}

void GraphSearchContext::Expand(std::uint32_t slot, const format::NodeRecordView& record,
                                bool page_mate, QueryStats* stats) {
  if (record.external_id == kInvalidVectorId || !expanded_.Insert(slot)) return;
  if (trace_ != nullptr) trace_->push_back(slot);
  const float distance = record_distance_(query_.data(), record.vector);
  if (filter_ == nullptr || filter_->Accept(record.external_id)) {
    results_.emplace_back(distance, record.external_id);
    if (restricted_) NoteExact(distance);
  }
  ++stats->full_distances;
  // A page mate the walk did not ask for is worth following only if it is
  // nearer than what the list already holds (exact and PQ distances estimate
  // the same quantity): far mates would only add candidates the list drops,
  // each costing a PQ-code cache miss.
  if (restricted_ || (page_mate && !list_.WouldKeep(distance))) return;
  OfferNeighbours(record, stats);
}

bool GraphSearchContext::PassesFilter(std::uint32_t slot) const {
  const std::uint32_t row = index_.RowOfSlot(slot);
  return row != 0xFFFFFFFFu && filter_->Accept(row);
}

void GraphSearchContext::NoteExact(float distance) {
  if (top_.size() < top_k_) {
    top_.push_back(distance);
    std::push_heap(top_.begin(), top_.end());
    unchanged_run_ = 0;
  } else if (distance < top_.front()) {
    std::pop_heap(top_.begin(), top_.end());
    top_.back() = distance;
    std::push_heap(top_.begin(), top_.end());
    unchanged_run_ = 0;
  } else {
    ++unchanged_run_;
  }
}

Status GraphSearchContext::Take(const SearchParams& params, QueryStats* stats) {
  const DiskCandidates::Entry e = list_.TakeNew();
  ++taken_;
  if (expanded_.Contains(e.id)) return Status::OK();  // expanded from a page already read
  recent_distances_.push_back(e.distance);
  if (index_.cache.Find(e.id) != nullptr) {
    // Expanded after the round's selection (ExpandCached), as DiskANN does, so
    // a cache changes which reads are made but not the walk.
    cached_pending_.push_back(e.id);
    return Status::OK();
  }
  const bool by_page = params.page_search && layout_.records_per_page() > 1;
  if (by_page && !pages_.Insert(static_cast<std::uint32_t>(layout_.PageOf(e.id)))) {
    return Status::OK();  // its page is in flight; it is expanded when the page arrives
  }
  const std::uint32_t b = free_buffers_.back();
  free_buffers_.pop_back();
  const format::RecordLocation loc = layout_.Locate(e.id);
  IoRequest& r = requests_[b];
  r = IoRequest{};
  r.file = file_id_;
  r.offset = loc.sector * format::kSector;
  r.length = loc.sectors * static_cast<std::uint32_t>(format::kSector);
  r.buffer = buffers_.buffer(b);
  r.tag = (static_cast<std::uint64_t>(b) << 32) | e.id;
  pending_.push_back(&r);
  return Status::OK();
}

Status GraphSearchContext::ExpandCached(QueryStats* stats) {
  for (std::uint32_t slot : cached_pending_) {
    ++stats->cache_hits;
    ++stats->expanded;
    format::NodeRecordView record;
    STRATA_RETURN_IF_ERROR(
        format::DecodeContiguousRecord(layout_, slot, index_.cache.Find(slot), &record));
    Expand(slot, record, /*page_mate=*/false, stats);
  }
  cached_pending_.clear();
  return Status::OK();
}

Status GraphSearchContext::SubmitPending(QueryStats* stats) {
  if (pending_.empty()) return Status::OK();
  STRATA_RETURN_IF_ERROR(queue_->Submit(pending_));
  stats->reads += static_cast<std::uint32_t>(pending_.size());
  ++stats->hops;
  pending_.clear();
  return Status::OK();
}

Status GraphSearchContext::Complete(IoRequest* r, const SearchParams& params, QueryStats* stats) {
  STRATA_RETURN_IF_ERROR(r->status.WithContext(index_.nodes.path()));
  const auto target = static_cast<std::uint32_t>(r->tag & 0xFFFFFFFFu);
  const auto buffer = static_cast<std::uint32_t>(r->tag >> 32);
  const format::RecordLocation loc = layout_.Locate(target);
  const std::span<const std::byte> data(r->buffer, r->length);
  stats->pages_read += loc.sectors;
  STRATA_RETURN_IF_ERROR(index_.nodes.Verify(loc.sector, loc.sectors, data));
  ++stats->expanded;
  format::NodeRecordView record;
  Status st = format::DecodeRecord(layout_, target, loc, data, &record_scratch_, &record);
  if (!st.ok()) return st.WithContext(index_.nodes.path());
  Expand(target, record, /*page_mate=*/false, stats);
  const std::uint32_t per_page = layout_.records_per_page();
  if (params.page_search && per_page > 1) {
    const std::uint64_t first = layout_.PageOf(target) * per_page;
    const std::uint64_t end = std::min<std::uint64_t>(first + per_page, index_.num_slots());
    for (std::uint64_t s = first; s < end; ++s) {
      const auto slot = static_cast<std::uint32_t>(s);
      if (slot == target || expanded_.Contains(slot)) continue;
      st = format::DecodeRecord(layout_, slot, layout_.Locate(slot), data, &record_scratch_,
                                &record);
      if (!st.ok()) return st.WithContext(index_.nodes.path());
      if (record.external_id == kInvalidVectorId) continue;  // empty slot
      list_.SetState(slot, DiskCandidates::kDone);
      ++stats->page_records;
      Expand(slot, record, /*page_mate=*/true, stats);
    }
  }
  free_buffers_.push_back(buffer);
  return Status::OK();
}

void GraphSearchContext::UpdateWidth(const SearchParams& params) {
  // Nodes taken since the last update that the list would still keep.
  for (float d : recent_distances_) {
    ++reads_total_;
    if (list_.WouldKeep(d)) ++reads_in_;
  }
  recent_distances_.clear();
  if (!params.dynamic_width || width_ >= params.beam_width) return;
  // The approach phase ends once the frontier sits a few positions deep in
  // the list: the nearest candidates are done and new ones land behind them.
  if (!converged_) {
    if (list_.FirstNew() < 5) return;
    converged_ = true;
    reads_in_ = reads_total_ = 0;
    return;
  }
  // Widen while at most 10 % of recent reads were for nodes the list would
  // no longer keep (PipeANN's rule): extra reads then rarely go to waste.
  if (reads_total_ > 0 && 10 * (reads_total_ - reads_in_) <= reads_total_) {
    width_ = std::min(width_ + 1, params.beam_width);
  }
}

Status GraphSearchContext::RunRounds(const SearchParams& params, QueryStats* stats) {
  const std::uint32_t max_taken =
      params.max_expansions ? params.max_expansions : std::max(4 * params.list_size, 32u);
  while (list_.HasNew() && taken_ < max_taken && !ScanConverged(params)) {
    std::uint32_t round = 0;
    while (round < width_ && list_.HasNew() && taken_ < max_taken) {
      STRATA_RETURN_IF_ERROR(Take(params, stats));
      ++round;
    }
    if (pending_.empty()) {
      STRATA_RETURN_IF_ERROR(ExpandCached(stats));
      UpdateWidth(params);
      continue;
    }
    // Expand in issue order (not completion order) so results do not depend
    // on I/O timing.
    std::vector<IoRequest*>& batch = completed_;
    const std::size_t n = pending_.size();
    batch.assign(pending_.begin(), pending_.end());
    STRATA_RETURN_IF_ERROR(SubmitPending(stats));
    STRATA_RETURN_IF_ERROR(ExpandCached(stats));  // while the reads are in flight
    const Timer io_timer;
    std::size_t done = 0;
    IoRequest* scratch[128];
    while (done < n) {
      STRATA_ASSIGN_OR_RETURN(std::size_t got,
                              queue_->Wait(std::span<IoRequest*>(scratch, n - done), n - done));
      done += got;
    }
    stats->io_wait_us += io_timer.ElapsedMicros();
    for (std::size_t i = 0; i < n; ++i) STRATA_RETURN_IF_ERROR(Complete(batch[i], params, stats));
    UpdateWidth(params);
  }
  return Status::OK();
}

Status GraphSearchContext::RunPipelined(const SearchParams& params, QueryStats* stats) {
  const std::uint32_t max_taken =
      params.max_expansions ? params.max_expansions : std::max(4 * params.list_size, 32u);
  std::uint32_t in_flight = 0;
  IoRequest* done[128];
  for (;;) {
    // Refill: keep `width_` reads in flight.
    while (in_flight + pending_.size() < width_ && list_.HasNew() && taken_ < max_taken &&
           !ScanConverged(params)) {
      STRATA_RETURN_IF_ERROR(Take(params, stats));
    }
    in_flight += static_cast<std::uint32_t>(pending_.size());
    STRATA_RETURN_IF_ERROR(SubmitPending(stats));
    STRATA_RETURN_IF_ERROR(ExpandCached(stats));
    if (in_flight == 0) {
      if (!list_.HasNew() || taken_ >= max_taken || ScanConverged(params)) break;
      continue;  // cache hits only: take more
    }
    // Harvest what has completed; block (never spin) only when nothing has.
    STRATA_ASSIGN_OR_RETURN(std::size_t got, queue_->Poll(std::span<IoRequest*>(done, in_flight)));
    if (got == 0) {
      const Timer io_timer;
      STRATA_ASSIGN_OR_RETURN(got, queue_->Wait(std::span<IoRequest*>(done, in_flight), 1));
      stats->io_wait_us += io_timer.ElapsedMicros();
    }
    in_flight -= static_cast<std::uint32_t>(got);
    for (std::size_t i = 0; i < got; ++i) STRATA_RETURN_IF_ERROR(Complete(done[i], params, stats));
    UpdateWidth(params);
  }
  return Status::OK();
}

Status GraphSearchContext::Search(std::span<const float> query, const SearchParams& given,
                                  std::span<VectorId> ids, std::span<float> distances,
                                  QueryStats* stats) {
  const Timer timer;
  SearchParams params = given;
  params.list_size = given.EffectiveListSize();
  QueryStats unused;
  if (stats == nullptr) stats = &unused;  // the costs are counted either way
  STRATA_RETURN_IF_ERROR(Prepare(query, params, std::min(ids.size(), distances.size()), stats));
  if (restricted_) {
    SeedRestricted(params, stats);
  } else {
    Seed(params, stats);
  }
  Status st = params.pipelined ? RunPipelined(params, stats) : RunRounds(params, stats);
  if (!st.ok()) {
    // Drain reads still in flight so their buffers are not written later.
    while (queue_->in_flight() > 0) {
      IoRequest* done[128];
      if (!queue_->Wait(std::span<IoRequest*>(done, 128), 1).ok()) break;
    }
    pending_.clear();
    return st;
  }
  const std::size_t found = std::min<std::size_t>(params.k, results_.size());
  std::partial_sort(results_.begin(), results_.begin() + found, results_.end());
  for (std::size_t i = 0; i < params.k; ++i) {
    ids[i] = i < found ? results_[i].second : kInvalidVectorId;
    distances[i] = i < found ? results_[i].first : std::numeric_limits<float>::infinity();
  }
  stats->latency_us = timer.ElapsedMicros();
  return Status::OK();
}

}  // namespace strata::search
