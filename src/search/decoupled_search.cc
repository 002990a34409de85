#include "search/decoupled_search.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "base/timer.h"
#include "quant/pq/pq_adc.h"
#include "search/graph_query.h"
#include "search/speculative_rerank.h"

namespace strata::search {
namespace {

// Stands for "a filter" when a search is widened by its live share alone.
class AcceptAll final : public IdFilter {
 public:
  bool Accept(std::uint64_t) const override { return true; }
};
const AcceptAll kAcceptAll;

}  // namespace
namespace {

constexpr std::uint32_t kNoRow = 0xFFFFFFFFu;
// Re-rank buffers: two groups of the largest size in flight.
constexpr std::uint32_t kRerankBuffers = 2 * SearchParams::kMaxRerankGroup;

}  // namespace

Result<DecoupledGraphData> DecoupledGraphData::Open(const std::string& dir,
                                                    const GraphIndexData& index, bool grown) {
  DecoupledGraphData d;
  STRATA_ASSIGN_OR_RETURN(d.edges, format::EdgeFile::Open(dir + "/graph.edges", grown));
  STRATA_ASSIGN_OR_RETURN(d.vectors, format::VectorFile::Open(dir + "/graph.vectors", grown));
  if (d.edges.num_vertices() != index.num_slots()) {
    return Status::Corruption(d.edges.path() + ": " + std::to_string(d.edges.num_vertices()) +
                              " vertices, the index " + std::to_string(index.num_slots()) +
                              " slots");
  }
  const format::VectorFileLayout& vl = d.vectors.layout();
  if (vl.num_slots != index.num_slots() || vl.dim != index.dim() ||
      vl.element_type != index.nodes.layout().element_type) {
    return Status::Corruption(d.vectors.path() + ": shape does not match the index");
  }
  // The packed baseline's slots hold whole vectors of the index's shape.
  if (const std::uint32_t vb = d.edges.geometry().vector_bytes; vb != 0 && vb != vl.vector_bytes) {
    return Status::Corruption(d.edges.path() + ": slots carry " + std::to_string(vb) +
                              "-byte vectors, the index's are " + std::to_string(vl.vector_bytes));
  }
  if (grown) {
    STRATA_ASSIGN_OR_RETURN(d.where, d.edges.ScanOriginalLocations());
  } else {
    STRATA_ASSIGN_OR_RETURN(d.where, d.edges.ScanLocations());
  }
  return d;
}

std::uint64_t DecoupledGraphData::DiskBytes() const {
  return (1 + edges.num_pages()) * format::kSector +
         (1 + vectors.layout().data_sectors()) * format::kSector;
}

// Reads the vectors of re-rank groups from the vector file (a group's
// vectors that share a sector share its read) and computes their exact
// distances: the VectorFetcher of speculative re-ranking. Two groups at most
// in flight, each in its half of the re-rank buffers.
class DecoupledSearchContext::VectorReader final : public VectorFetcher {
 public:
  VectorReader(DecoupledSearchContext* ctx, std::uint32_t first_buffer)
      : ctx_(*ctx), first_buffer_(first_buffer) {}

  void Reset(QueryStats* stats) {
    stats_ = stats;
    submitted_ = collected_ = 0;
    kept_.clear();
    kept_sectors_.clear();
  }

  Status Submit(std::span<const graph::NodeId> ids) override {
    Group& g = groups_[submitted_ % 2];
    const std::uint32_t base = first_buffer_ + (submitted_ % 2) * SearchParams::kMaxRerankGroup;
    g.ids.assign(ids.begin(), ids.end());
    g.buffer_of.clear();
    g.buffer_of_sector.clear();
    g.sectors.clear();
    g.done = 0;
    const format::VectorFileLayout& vl = ctx_.layout_.vectors.layout();
    std::vector<IoRequest*>& batch = batch_;
    batch.clear();
    for (graph::NodeId v : ids) {
      const std::uint64_t sector = vl.SectorOf(v);
      // A sector an earlier group read is kept for the query: candidates
      // near the query are graph neighbours, which a page-shuffled order
      // placed in neighbouring slots, so later groups often share sectors.
      if (kept_.count(sector) != 0) {
        g.buffer_of.push_back(kKept);
        continue;
      }
      // The file's last sector, while inserts fill it, is in RAM only.
      if (ctx_.layout_.growth && ctx_.layout_.growth->held_tail() == sector) {
        const std::size_t at = kept_sectors_.size();
        kept_sectors_.resize(at + format::kSector);
        if (ctx_.layout_.growth->CopyTail(sector, kept_sectors_.data() + at)) {
          kept_.emplace(sector, at);
          g.buffer_of.push_back(kKept);
          continue;
        }
        kept_sectors_.resize(at);
      }
      auto it = std::find(g.sectors.begin(), g.sectors.end(), sector);
      if (it != g.sectors.end()) {
        g.buffer_of.push_back(base + static_cast<std::uint32_t>(it - g.sectors.begin()));
        continue;
      }
      const auto b = base + static_cast<std::uint32_t>(g.sectors.size());
      g.sectors.push_back(sector);
      g.buffer_of_sector.push_back(b);
      g.buffer_of.push_back(b);
      IoRequest& r = ctx_.requests_[b];
      r = IoRequest{};
      r.file = ctx_.vector_file_;
      r.offset = sector * format::kSector;
      r.length = static_cast<std::uint32_t>(format::kSector);
      r.buffer = ctx_.buffers_.buffer(b);
      r.tag = submitted_ % 2;
      batch.push_back(&r);
    }
    STRATA_RETURN_IF_ERROR(ctx_.queue_->Submit(batch));
    stats_->reads += static_cast<std::uint32_t>(batch.size());
    stats_->pages_read += static_cast<std::uint32_t>(batch.size());
    batch.clear();
    ++submitted_;
    return Status::OK();
  }

  Status Collect(std::span<float> distances) override {
    Group& g = groups_[collected_ % 2];
    IoRequest* done[kRerankBuffers];
    const Timer io_timer;
    while (g.done < g.sectors.size()) {
      STRATA_ASSIGN_OR_RETURN(std::size_t got,
                              ctx_.queue_->Wait(std::span<IoRequest*>(done, kRerankBuffers), 1));
      for (std::size_t i = 0; i < got; ++i) {
        STRATA_RETURN_IF_ERROR(done[i]->status.WithContext(ctx_.layout_.vectors.path()));
        ++groups_[done[i]->tag].done;
      }
    }
    stats_->io_wait_us += io_timer.ElapsedMicros();
    const format::VectorFileLayout& vl = ctx_.layout_.vectors.layout();
    for (std::size_t s = 0; s < g.sectors.size(); ++s) {  // verified once, then kept
      std::byte* buffer = ctx_.buffers_.buffer(g.buffer_of_sector[s]);
      STRATA_RETURN_IF_ERROR(Verify(g.sectors[s], buffer));
      kept_.emplace(g.sectors[s], kept_sectors_.size());
      kept_sectors_.insert(kept_sectors_.end(), buffer, buffer + format::kSector);
    }
    for (std::size_t i = 0; i < g.ids.size(); ++i) {
      const std::uint64_t sector = vl.SectorOf(g.ids[i]);
      const std::byte* bytes = kept_sectors_.data() + kept_.at(sector) + vl.OffsetOf(g.ids[i]);
      distances[i] = ctx_.record_distance_(ctx_.query_.data(),
                                           std::span<const std::byte>(bytes, vl.vector_bytes));
    }
    stats_->full_distances += static_cast<std::uint32_t>(g.ids.size());
    ++collected_;
    return Status::OK();
  }

  // Verifies a vector sector read from the file. A growing layout's last
  // sector, the one the writer rewrites, is never read from the file: it is
  // taken from RAM (DecoupledGrowth::HoldTail, held before any vertex in it
  // is published, replaced only once it is complete in the file).
  Status Verify(std::uint64_t sector, std::byte* buffer) {
    return format::VerifySector(std::span<std::byte, format::kSector>(buffer, format::kSector),
                                format::FileKind::kVectors, sector, ctx_.layout_.vectors.path());
  }

  // Waits for every read still in flight (after an error).
  void Drain() {
    IoRequest* done[kRerankBuffers];
    while (ctx_.queue_->in_flight() > 0) {
      if (!ctx_.queue_->Wait(std::span<IoRequest*>(done, kRerankBuffers), 1).ok()) break;
    }
  }

 private:
  struct Group {
    std::vector<graph::NodeId> ids;
    std::vector<std::uint32_t> buffer_of;  // per id (kKept: read by an earlier group)
    std::vector<std::uint64_t> sectors;    // distinct sectors read, in read order
    std::vector<std::uint32_t> buffer_of_sector;
    std::size_t done = 0;
  };
  DecoupledSearchContext& ctx_;
  std::uint32_t first_buffer_;
  QueryStats* stats_ = nullptr;
  static constexpr std::uint32_t kKept = 0xFFFFFFFFu;
  Group groups_[2];
  std::vector<IoRequest*> batch_;
  // Sectors read this query (verified), and where each is in kept_sectors_.
  std::unordered_map<std::uint64_t, std::size_t> kept_;
  std::vector<std::byte> kept_sectors_;
  std::uint64_t submitted_ = 0, collected_ = 0;
};

DecoupledSearchContext::DecoupledSearchContext(const GraphIndexData& index,
                                               const DecoupledGraphData& layout)
    : index_(index),
      layout_(layout),
      record_distance_(index.metric, index.nodes.layout().element_type, index.dim(),
                       index.kernels) {}

DecoupledSearchContext::~DecoupledSearchContext() {
  if (reader_slot_) layout_.growth->epochs().Release(*reader_slot_);
}

Result<std::unique_ptr<DecoupledSearchContext>> DecoupledSearchContext::Create(
    const GraphIndexData& index, const DecoupledGraphData& layout,
    const IoQueueOptions& io_options, std::uint32_t max_beam_width) {
  if (max_beam_width == 0 || max_beam_width > 128) {
    return Status::InvalidArgument("max beam width must be in 1..128");
  }
  if (!index.resident_codes()) {
    return Status::NotSupported("the decoupled layout is searched with the PQ codes in RAM");
  }
  std::unique_ptr<DecoupledSearchContext> ctx(new DecoupledSearchContext(index, layout));
  IoQueueOptions opts = io_options;
  opts.queue_depth = std::max(opts.queue_depth, std::max(max_beam_width, kRerankBuffers));
  STRATA_ASSIGN_OR_RETURN(ctx->queue_, MakeIoQueue(opts));
  STRATA_ASSIGN_OR_RETURN(ctx->edge_file_, ctx->queue_->AddFile(layout.edges.file()));
  STRATA_ASSIGN_OR_RETURN(ctx->vector_file_, ctx->queue_->AddFile(layout.vectors.file()));
  const std::uint32_t buffers = max_beam_width + kRerankBuffers;
  STRATA_ASSIGN_OR_RETURN(ctx->buffers_, BufferPool::Create(buffers, format::kSector));
  STRATA_RETURN_IF_ERROR(ctx->queue_->RegisterBuffers(ctx->buffers_.region()));
  ctx->max_beam_width_ = max_beam_width;
  ctx->requests_.resize(buffers);
  ctx->issued_.resize(buffers);
  if (layout.growth) {
    STRATA_ASSIGN_OR_RETURN(ctx->reader_slot_, layout.growth->epochs().Claim());
  }
  if (!index.mem_graph.empty()) {
    ctx->walker_.emplace(index.mem_graph);
    ctx->walker_graph_ = &index.mem_graph;
  }
  ctx->vectors_ = std::make_unique<VectorReader>(ctx.get(), max_beam_width);
  return ctx;
}

void DecoupledSearchContext::Offer(std::span<const std::uint32_t> vertices, QueryStats* stats) {
  fresh_.clear();
  const std::size_t m = index_.pq.code_size();
  for (std::uint32_t v : vertices) {
    if (v >= limit_ || expanded_.Contains(v) || !offered_.Insert(v)) continue;
    fresh_.push_back(v);
    // Codes are scattered over num_slots * m bytes: prefetch them all so the
    // cache misses overlap instead of being paid one after another.
    __builtin_prefetch(Code(v));
    __builtin_prefetch(Code(v) + m - 1);
  }
  if (fresh_.empty()) return;
  fresh_codes_.resize(fresh_.size() * m);
  for (std::size_t i = 0; i < fresh_.size(); ++i) {
    std::memcpy(fresh_codes_.data() + i * m, Code(fresh_[i]), m);
  }
  fresh_dists_.resize(fresh_.size());
  quant::ComputeDistances(table_, fresh_codes_.data(), fresh_.size(), fresh_dists_.data());
  stats->pq_distances += static_cast<std::uint32_t>(fresh_.size());
  for (std::size_t i = 0; i < fresh_.size(); ++i) list_.Insert(fresh_[i], fresh_dists_[i]);
}

void DecoupledSearchContext::Seed(const SearchParams& params, QueryStats* stats) {
  if (params.mem_graph && walker_) {
    const std::uint32_t mem_l = params.mem_graph_L ? params.mem_graph_L
                                                   : std::max<std::uint32_t>(params.k, 16);
    stats->mem_graph_distances +=
        static_cast<std::uint32_t>(walker_->Search(query_.data(), mem_l, mem_l, &seeds_));
    for (std::uint32_t& s : seeds_) s = walker_graph_->slots()[s];
    Offer(seeds_, stats);
    if (list_.size() > 0) return;
  }
  const std::uint32_t entry = index_.entry_point;
  Offer(std::span<const std::uint32_t>(&entry, 1), stats);
}

const std::byte* DecoupledSearchContext::KeptPage(std::uint32_t page) const {
  auto it = kept_.find(page);
  return it == kept_.end() ? nullptr : kept_pages_.data() + it->second;
}

bool DecoupledSearchContext::KeptList(std::uint32_t vertex, format::EdgeLocation loc,
                                      std::vector<std::uint32_t>* ids,
                                      std::vector<std::byte>* vector) const {
  const std::byte* sector = KeptPage(loc.page);
  if (sector == nullptr) return false;
  auto page = format::EdgePageReader::Open(
      layout_.edges.geometry(),
      std::span<const std::byte, format::kSectorPayload>(sector, format::kSectorPayload));
  return page.ok() && page->ReadList(loc.slot, vertex, ids, vector).ok();
}

Status DecoupledSearchContext::Expand(std::uint32_t vertex, format::EdgeLocation loc,
                                      const std::byte* sector, QueryStats* stats) {
  if (!expanded_.Insert(vertex)) return Status::OK();
  ++stats->expanded;
  STRATA_ASSIGN_OR_RETURN(
      format::EdgePageReader page,
      format::EdgePageReader::Open(layout_.edges.geometry(),
                                   std::span<const std::byte, format::kSectorPayload>(
                                       sector, format::kSectorPayload)));
  STRATA_RETURN_IF_ERROR(
      page.ReadList(loc.slot, vertex, &neighbours_).WithContext(layout_.edges.path()));
  if (PageVectors()) {
    expanded_exact_.push_back({vertex, record_distance_(query_.data(), page.Vector(loc.slot))});
    ++stats->full_distances;
  }
  Offer(neighbours_, stats);
  return Status::OK();
}

Status DecoupledSearchContext::Complete(const IoRequest& r, const SearchParams& params,
                                        QueryStats* stats) {
  STRATA_RETURN_IF_ERROR(r.status.WithContext(layout_.edges.path()));
  const auto target = static_cast<std::uint32_t>(r.tag >> 32);
  const format::EdgeLocation loc = issued_[r.tag & 0xFFFFFFFFu];
  const std::uint32_t page_no = loc.page;
  ++stats->pages_read;
  STRATA_RETURN_IF_ERROR(
      layout_.edges
          .OpenPage(page_no, std::span<const std::byte, format::kSector>(r.buffer, format::kSector))
          .status());
  if (layout_.cache) layout_.cache->Offer(page_no, r.buffer);
  return Arrive(loc, target, r.buffer, params, stats);
}

Status DecoupledSearchContext::Arrive(format::EdgeLocation loc, std::uint32_t target,
                                      const std::byte* sector, const SearchParams& params,
                                      QueryStats* stats) {
  const std::uint32_t page_no = loc.page;
  std::size_t offset = kept_pages_.size();
  if (sector != nullptr) {
    kept_pages_.insert(kept_pages_.end(), sector, sector + format::kSector);
  } else {
    offset -= format::kSector;  // the caller copied it in already
  }
  kept_.emplace(page_no, offset);
  const std::byte* kept = kept_pages_.data() + offset;
  STRATA_ASSIGN_OR_RETURN(
      format::EdgePageReader page,
      format::EdgePageReader::Open(layout_.edges.geometry(),
                                   std::span<const std::byte, format::kSectorPayload>(
                                       kept, format::kSectorPayload)));
  STRATA_RETURN_IF_ERROR(Expand(target, loc, kept, stats));
  if (!params.page_search) return Status::OK();
  for (std::uint32_t s = 0; s < page.slots(); ++s) {
    const std::uint32_t v = page.vertex(s);
    if (v == format::kNoVertex || v >= limit_ || expanded_.Contains(v)) continue;
    // A mate whose list has moved since (an in-place update) is read where
    // it is now, if the walk takes it.
    const format::EdgeLocation mate = layout_.Location(v);
    if (mate.page != page_no || mate.slot != s) continue;
    // A mate is worth expanding only where its code distance would enter
    // the list: a far mate would only add candidates the list drops.
    const float d = quant::ComputeDistance(table_, Code(v));
    ++stats->pq_distances;
    if (!list_.WouldKeep(d)) continue;
    if (offered_.Insert(v) || !list_.SetState(v, DiskCandidates::kDone)) list_.Insert(v, d);
    list_.SetState(v, DiskCandidates::kDone);
    ++stats->page_records;
    STRATA_RETURN_IF_ERROR(Expand(v, mate, kept, stats));
  }
  return Status::OK();
}

Status DecoupledSearchContext::Walk(const SearchParams& params, QueryStats* stats) {
  const std::uint32_t max_taken =
      params.max_expansions ? params.max_expansions : std::max(4 * params.list_size, 32u);
  IoRequest* done[128];
  while (list_.HasNew() && taken_ < max_taken) {
    pending_.clear();
    deferred_.clear();
    while (pending_.size() < params.beam_width && list_.HasNew() && taken_ < max_taken) {
      const DiskCandidates::Entry e = list_.TakeNew();
      ++taken_;
      if (expanded_.Contains(e.id)) continue;
      const format::EdgeLocation loc = layout_.Location(e.id);
      const std::uint32_t page_no = loc.page;
      if (page_no == 0) {  // an empty slot: no list
        expanded_.Insert(e.id);
        continue;
      }
      if (const std::byte* kept = KeptPage(page_no)) {
        STRATA_RETURN_IF_ERROR(Expand(e.id, loc, kept, stats));
        continue;
      }
      if (!requested_pages_.Insert(page_no)) {
        deferred_.emplace_back(e.id, loc);
        continue;
      }
      if (layout_.cache) {
        const std::size_t end = kept_pages_.size();
        kept_pages_.resize(end + format::kSector);
        if (layout_.cache->Lookup(page_no, kept_pages_.data() + end)) {
          ++stats->cache_hits;
          STRATA_RETURN_IF_ERROR(Arrive(loc, e.id, nullptr, params, stats));
          continue;
        }
        kept_pages_.resize(end);
      }
      IoRequest& r = requests_[pending_.size()];
      r = IoRequest{};
      r.file = edge_file_;
      r.offset = static_cast<std::uint64_t>(page_no) * format::kSector;
      r.length = static_cast<std::uint32_t>(format::kSector);
      r.buffer = buffers_.buffer(pending_.size());
      r.tag = (static_cast<std::uint64_t>(e.id) << 32) | pending_.size();
      issued_[pending_.size()] = loc;
      pending_.push_back(&r);
    }
    if (pending_.empty()) continue;
    const std::size_t n = pending_.size();
    STRATA_RETURN_IF_ERROR(queue_->Submit(pending_));
    stats->reads += static_cast<std::uint32_t>(n);
    ++stats->hops;
    const Timer io_timer;
    for (std::size_t got = 0; got < n;) {
      STRATA_ASSIGN_OR_RETURN(std::size_t now,
                              queue_->Wait(std::span<IoRequest*>(done, n - got), n - got));
      got += now;
    }
    stats->io_wait_us += io_timer.ElapsedMicros();
    // In issue order, not completion order: results independent of timing.
    for (std::size_t i = 0; i < n; ++i) STRATA_RETURN_IF_ERROR(Complete(requests_[i], params, stats));
    for (const auto& [v, loc] : deferred_) {
      STRATA_RETURN_IF_ERROR(Expand(v, loc, KeptPage(loc.page), stats));
    }
  }
  return Status::OK();
}

Status DecoupledSearchContext::ExactDistances(std::span<const graph::Neighbor> candidates,
                                              std::vector<graph::Neighbor>* out) {
  const std::size_t group = SearchParams::kMaxRerankGroup;
  const std::size_t groups = (candidates.size() + group - 1) / group;
  std::vector<graph::NodeId>& ids = fresh_;
  auto submit = [&](std::size_t g) {
    ids.clear();
    for (std::size_t i = g * group; i < std::min(candidates.size(), (g + 1) * group); ++i) {
      ids.push_back(candidates[i].id);
    }
    return vectors_->Submit(ids);
  };
  out->clear();
  float dist[SearchParams::kMaxRerankGroup];
  if (groups > 0) STRATA_RETURN_IF_ERROR(submit(0));
  for (std::size_t g = 0; g < groups; ++g) {
    if (g + 1 < groups) STRATA_RETURN_IF_ERROR(submit(g + 1));
    const std::size_t begin = g * group, end = std::min(candidates.size(), begin + group);
    STRATA_RETURN_IF_ERROR(vectors_->Collect(std::span<float>(dist, end - begin)));
    for (std::size_t i = begin; i < end; ++i) out->push_back({candidates[i].id, dist[i - begin]});
  }
  return Status::OK();
}

bool DecoupledSearchContext::Returnable(std::uint32_t vertex) const {
  const std::uint32_t row = RowOf(vertex);
  return row != kNoRow && !Hidden(vertex) && (filter_ == nullptr || filter_->Accept(row));
}

namespace {

void KeepNearest(std::size_t k, std::vector<graph::Neighbor>* top) {
  k = std::min(k, top->size());
  std::partial_sort(top->begin(), top->begin() + static_cast<std::ptrdiff_t>(k), top->end(),
                    graph::NeighborLess);
  top->resize(k);
}

}  // namespace

Status DecoupledSearchContext::Rerank(const SearchParams& params, QueryStats* stats) {
  vectors_->Reset(stats);
  if (PageVectors()) {
    // Exact distances came with the pages: the nearest expanded vertices
    // that may be returned.
    top_.clear();
    for (const graph::Neighbor& n : expanded_exact_) {
      if (Returnable(n.id)) top_.push_back(n);
    }
    KeepNearest(params.k, &top_);
    return Status::OK();
  }
  candidates_.clear();
  for (std::size_t i = 0; i < list_.size(); ++i) {
    if (Returnable(list_[i].id)) candidates_.push_back({list_[i].id, list_[i].distance});
  }
  if (params.rerank_group > 0) {
    STRATA_ASSIGN_OR_RETURN(
        SpeculativeRerankResult r,
        SpeculativeRerank(candidates_, params.k, params.rerank_group, vectors_.get()));
    stats->reranked = static_cast<std::uint32_t>(r.exact.size());
    top_ = std::move(r.top);
    return Status::OK();
  }
  STRATA_RETURN_IF_ERROR(ExactDistances(candidates_, &top_));
  stats->reranked = static_cast<std::uint32_t>(top_.size());
  KeepNearest(params.k, &top_);
  return Status::OK();
}

Status DecoupledSearchContext::Begin(std::span<const float> query, const SearchParams& params,
                                     std::size_t slots, QueryStats* stats) {
  *stats = QueryStats{};
  STRATA_RETURN_IF_ERROR(
      PrepareGraphQuery(index_, query, params, max_beam_width_, slots, &query_, &table_));
  list_.Reset(params.list_size);
  offered_.Clear();
  expanded_.Clear();
  requested_pages_.Clear();
  kept_.clear();
  kept_pages_.clear();
  expanded_exact_.clear();
  taken_ = 0;
  filter_ = params.filter;
  // The epoch first, then the vertex count: every location this query reads
  // is at least as new as the epoch it announced.
  if (reader_slot_) layout_.growth->epochs().Enter(*reader_slot_);
  if (layout_.growth) {
    // The entrance graph before the vertex count: its samples were
    // published before it was.
    if (auto g = layout_.growth->entrance(); g && g != entrance_) {
      entrance_ = std::move(g);
      walker_.emplace(*entrance_);
      walker_graph_ = entrance_.get();
    }
  }
  limit_ = layout_.growth ? layout_.growth->count() : static_cast<std::uint32_t>(index_.num_slots());
  return Status::OK();
}

void DecoupledSearchContext::End() {
  if (reader_slot_) layout_.growth->epochs().Exit(*reader_slot_);
}

Status DecoupledSearchContext::Search(std::span<const float> query, const SearchParams& given,
                                      std::span<VectorId> ids, std::span<float> distances,
                                      QueryStats* stats) {
  const Timer timer;
  SearchParams params = given;
  params.list_size = given.EffectiveListSize();
  if (layout_.growth && layout_.growth->search_hides_deleted()) {
    // Deleted vertices fill the list but are never returned: widened by the
    // live share as for a filter few pass (an owner deciding liveness by
    // its filter sets filter_fraction itself).
    const double count = layout_.growth->count();
    const double live = count - layout_.growth->deleted_count();
    if (live < count && live > 0) {
      SearchParams widened = given;
      widened.filter_fraction = static_cast<float>(std::max(1e-3, live / count));
      if (widened.filter == nullptr) widened.filter = &kAcceptAll;
      params.list_size = std::max(params.list_size, widened.EffectiveListSize());
    }
  }
  QueryStats unused;
  if (stats == nullptr) stats = &unused;
  STRATA_RETURN_IF_ERROR(Begin(query, params, std::min(ids.size(), distances.size()), stats));
  Seed(params, stats);
  Status st = Walk(params, stats);
  if (st.ok()) st = Rerank(params, stats);
  if (!st.ok()) vectors_->Drain();  // no read may land in a buffer after we return
  End();
  if (!st.ok()) return st;
  for (std::size_t i = 0; i < params.k; ++i) {
    const bool found = i < top_.size();
    ids[i] = found ? RowOf(top_[i].id) : kInvalidVectorId;
    distances[i] = found ? top_[i].distance : std::numeric_limits<float>::infinity();
  }
  stats->latency_us = timer.ElapsedMicros();
  return Status::OK();
}

Status DecoupledSearchContext::Explore(std::span<const float> query, const SearchParams& given,
                                       std::vector<graph::Neighbor>* exact,
                                       std::vector<graph::Neighbor>* approximate,
                                       QueryStats* stats) {
  SearchParams params = given;
  params.list_size = given.EffectiveListSize();
  params.filter = nullptr;
  QueryStats unused;
  if (stats == nullptr) stats = &unused;
  STRATA_RETURN_IF_ERROR(Begin(query, params, params.k, stats));
  Seed(params, stats);
  Status st = Walk(params, stats);
  approximate->clear();
  candidates_.clear();
  if (PageVectors()) {
    // The packed baseline: every expanded vertex has its exact distance
    // (DiskANN's insert prunes over the expanded set), the list's others
    // their code distances.
    exact->clear();
    for (const graph::Neighbor& n : expanded_exact_) {
      if (RowOf(n.id) != kNoRow && !Deleted(n.id)) exact->push_back(n);
    }
    for (std::size_t i = 0; i < list_.size(); ++i) {
      const std::uint32_t v = list_[i].id;
      if (RowOf(v) == kNoRow || Deleted(v) || expanded_.Contains(v)) continue;
      approximate->push_back({v, list_[i].distance});
    }
    End();
    STRATA_RETURN_IF_ERROR(st);
    std::sort(exact->begin(), exact->end(), graph::NeighborLess);
    return Status::OK();
  }
  for (std::size_t i = 0; i < list_.size(); ++i) {
    const std::uint32_t v = list_[i].id;
    if (RowOf(v) == kNoRow || Deleted(v)) continue;
    (candidates_.size() < params.k ? candidates_ : *approximate).push_back({v, list_[i].distance});
  }
  vectors_->Reset(stats);
  if (st.ok()) st = ExactDistances(candidates_, exact);
  if (!st.ok()) vectors_->Drain();
  End();
  STRATA_RETURN_IF_ERROR(st);
  stats->reranked = static_cast<std::uint32_t>(exact->size());
  std::sort(exact->begin(), exact->end(), graph::NeighborLess);
  return Status::OK();
}

}  // namespace strata::search
