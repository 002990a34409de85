#include "update/in_place_updater.h"

#include <fcntl.h>
#include <sys/file.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <limits>
#include <string>
#include <thread>

#include "base/aligned_buffer.h"
#include "base/timer.h"
#include "format/sector_file.h"
#include "graph/vector_view.h"

namespace strata::update {
namespace {

// Takes an exclusive flock on the layout file this updater writes, waiting
// up to `seconds` for it. The lock belongs to the open file description,
// which the I/O ring of a writer also references (registered files, and
// every request in flight): a killed writer's lock is released only once
// its ring is torn down and its last write has landed, so a successor that
// holds the lock never has a page it reuses clobbered by a predecessor's
// late write.
Status LockForWriting(const DirectFile& file, double seconds) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (::flock(file.fd(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) return Status::FromErrno("flock " + file.path(), errno);
    if (std::chrono::steady_clock::now() > deadline) {
      return Status::Busy(file.path() + " is being written by another updater");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Status::OK();
}

constexpr std::uint32_t kNoRow = 0xFFFFFFFFu;

// How far ahead of their writes the files are grown.
constexpr std::uint64_t kEdgeReserveBytes = 16u << 20;
constexpr std::uint64_t kVectorReserveBytes = 8u << 20;

// Grows `file` by fallocate, at least `chunk` bytes at a time, until it
// holds `end` bytes. An O_DIRECT write past the end of a file takes the
// inode's lock exclusively (ext4, xfs) and cannot complete without
// blocking, so io_uring hands it, and every read that meets the lock
// meanwhile, to its worker threads, a context switch each; into allocated
// space the same write is an overwrite, issued inline. A file system
// without fallocate gets extending writes, as before.
Status Reserve(const DirectFile& file, std::uint64_t end, std::uint64_t chunk,
               std::uint64_t* reserved) {
  if (end <= *reserved) return Status::OK();
  const std::uint64_t to = std::max(end, *reserved + chunk);
  if (::fallocate(file.fd(), 0, static_cast<off_t>(*reserved),
                  static_cast<off_t>(to - *reserved)) != 0) {
    if (errno == EOPNOTSUPP || errno == ENOSYS) {
      *reserved = std::numeric_limits<std::uint64_t>::max();
      return Status::OK();
    }
    return Status::FromErrno("fallocate " + file.path(), errno);
  }
  *reserved = to;
  return Status::OK();
}

}  // namespace

Status InPlaceOptions::Validate() const {
  if (L == 0 || L > 4096) return Status::InvalidArgument("in-place L must be in 1..4096");
  if (beam_width == 0 || beam_width > 128) {
    return Status::InvalidArgument("in-place beam width must be in 1..128");
  }
  if (exact_neighbours == 0 || exact_neighbours > L) {
    return Status::InvalidArgument("exact_neighbours must be in 1..L");
  }
  if (!(alpha >= 1.0f)) return Status::InvalidArgument("alpha must be >= 1");
  return Status::OK();
}

InPlaceUpdater::InPlaceUpdater(const search::GraphIndexData& index,
                               search::DecoupledGraphData* layout, const InPlaceOptions& options)
    : index_(index), layout_(layout), options_(options), geometry_(layout->edges.geometry()) {}

InPlaceUpdater::~InPlaceUpdater() = default;

Result<std::unique_ptr<InPlaceUpdater>> InPlaceUpdater::Create(const search::GraphIndexData& index,
                                                               search::DecoupledGraphData* layout,
                                                               const InPlaceOptions& given,
                                                               const InPlaceRecovery* recovery) {
  STRATA_RETURN_IF_ERROR(given.Validate());
  if (layout->growth) return Status::InvalidArgument("the layout already has an updater");
  if (index.nodes.layout().element_type != ElementType::kFloat32) {
    return Status::NotSupported("in-place updates write float32 vector files only");
  }
  if (!index.resident_codes()) {
    return Status::NotSupported("in-place updates need the PQ codes in RAM");
  }
  InPlaceOptions options = given;
  const auto& g = layout->edges.geometry();
  if (options.R == 0) options.R = std::max<std::uint32_t>(1, g.capacity * 10 / 13);
  if (options.R > g.capacity) {
    return Status::InvalidArgument("R " + std::to_string(options.R) +
                                   " exceeds the edge slots' capacity " +
                                   std::to_string(g.capacity));
  }
  const auto base = static_cast<std::uint32_t>(index.num_slots());
  const std::uint32_t appended = recovery != nullptr ? recovery->appended : 0;
  if (options.capacity < base + appended) options.capacity = base + appended;
  if (options.capacity >= 0xFFFFFFFEu) return Status::InvalidArgument("capacity too large");

  std::unique_ptr<InPlaceUpdater> u(new InPlaceUpdater(index, layout, options));
  STRATA_ASSIGN_OR_RETURN(u->edge_file_,
                          DirectFile::Open(layout->edges.path(), DirectFileMode::kReadWrite));
  STRATA_ASSIGN_OR_RETURN(u->vector_file_,
                          DirectFile::Open(layout->vectors.path(), DirectFileMode::kReadWrite));
  STRATA_RETURN_IF_ERROR(LockForWriting(u->edge_file_, 30));
  STRATA_RETURN_IF_ERROR(LockForWriting(u->vector_file_, 30));
  IoQueueOptions io = options.io;
  const std::uint32_t buffers = 2 * g.capacity + 8;
  io.queue_depth = std::max(io.queue_depth, buffers);
  STRATA_ASSIGN_OR_RETURN(u->queue_, MakeIoQueue(io));
  STRATA_ASSIGN_OR_RETURN(u->edge_id_, u->queue_->AddFile(u->edge_file_));
  STRATA_ASSIGN_OR_RETURN(u->vector_id_, u->queue_->AddFile(u->vector_file_));
  STRATA_ASSIGN_OR_RETURN(u->buffers_, BufferPool::Create(buffers, format::kSector));
  STRATA_RETURN_IF_ERROR(u->queue_->RegisterBuffers(u->buffers_.region()));
  u->requests_.resize(buffers);
  const std::uint32_t rows = static_cast<std::uint32_t>(index.num_nodes());
  layout->where.resize(options.capacity);
  layout->edges.set_growable();
  layout->growth =
      std::make_unique<search::DecoupledGrowth>(base, rows, options.capacity, index.pq.code_size());
  // Pages in the file: the layout's, and those earlier updates appended
  // (a grown file; pages no table names are free).
  u->next_page_ = std::max(layout->edges.num_pages(), layout->edges.file_pages()) + 1;
  u->tail_.Reset(format::kSector);
  STRATA_ASSIGN_OR_RETURN(u->edge_reserved_, u->edge_file_.Size());
  STRATA_ASSIGN_OR_RETURN(u->vector_reserved_, u->vector_file_.Size());
  u->defer_tail_ = recovery != nullptr && recovery->vector_of != nullptr;
  if (recovery != nullptr) STRATA_RETURN_IF_ERROR(u->Replay(*recovery));
  const std::uint32_t count = layout->growth->count();
  u->full_page_lists_ =
      g.fixed_size() ? g.slots_per_page
                     : static_cast<double>(layout->edges.num_vertices()) /
                           static_cast<double>(std::max<std::uint64_t>(1, layout->edges.num_pages()));
  // Live lists per page, from the table.
  u->live_.assign(u->next_page_, 0);
  for (std::uint32_t v = 0; v < count; ++v) {
    const format::EdgeLocation loc = layout->where[v];
    if (loc.page != 0) ++u->live_[loc.page];
  }
  for (std::uint32_t p = 1; p < u->next_page_; ++p) {
    if (u->live_[p] == 0) {
      u->free_.push_back({p, 0});
    } else {
      ++u->live_page_count_;
    }
  }
  // The vector file's last sector, when new slots will share it (Replay
  // has read and checked it already for a grown file).
  const format::VectorFileLayout& vl = layout->vectors.layout();
  if (recovery == nullptr) {
    u->tail_sector_ = vl.SectorOf(base);
    if (base % vl.vectors_per_sector != 0) {
      auto slot = layout->vectors.ReadSlot(
          base - 1, std::span<std::byte, format::kSector>(u->tail_.data(), format::kSector));
      STRATA_RETURN_IF_ERROR(slot.status());
    }
  }
  if (count % vl.vectors_per_sector != 0) {
    layout->growth->HoldTail(u->tail_sector_,
                             std::span<const std::byte, format::kSector>(u->tail_.data(), format::kSector));
  }

  u->reused_at_.assign(u->next_page_, 0);
  // The entrance graph: one inserted vertex in `every` joins it, the share
  // the index was built with; at a reopen the appended vertices that would
  // have joined it do so again (their vectors read back).
  if (options.entrance_updates && !index.mem_graph.empty()) {
    u->entrance_every_ = options.entrance_every != 0
                             ? options.entrance_every
                             : std::max<std::uint32_t>(
                                   1, static_cast<std::uint32_t>(index.num_slots() /
                                                                 index.mem_graph.size()));
    AlignedBuffer sector(format::kSector);
    auto span = std::span<std::byte, format::kSector>(sector.data(), format::kSector);
    std::vector<float> x(index.dim());
    for (std::uint32_t v = base; v < count; v += u->entrance_every_) {
      if (vl.SectorOf(v) == u->tail_sector_) {  // maybe not in the file yet
        std::memcpy(x.data(), u->tail_.data() + vl.OffsetOf(v), x.size() * sizeof(float));
      } else {
        STRATA_ASSIGN_OR_RETURN(std::span<const std::byte> bytes,
                                layout->vectors.ReadSlot(v, span));
        std::memcpy(x.data(), bytes.data(), x.size() * sizeof(float));
      }
      u->Sample(v, x);
    }
    u->ExtendEntrance();
  }
  STRATA_ASSIGN_OR_RETURN(auto seeker, u->TakeSeeker());  // one made now: errors show at Create
  u->ReturnSeeker(std::move(seeker));
  return u;
}

Status InPlaceUpdater::Replay(const InPlaceRecovery& r) {
  search::DecoupledGrowth& g = growth();
  const std::uint32_t base = g.base();
  const std::uint32_t count = base + r.appended;
  const std::size_t code_size = index_.pq.code_size();
  const std::string& path = layout_->edges.path();
  if (r.codes.size() != static_cast<std::size_t>(r.appended) * code_size) {
    return Status::Corruption(path + ": the journal holds " + std::to_string(r.codes.size()) +
                              " code bytes for " + std::to_string(r.appended) + " vertices");
  }
  for (const ListMove& m : r.moves) {
    if (m.vertex >= count || m.location.page == 0 || m.location.page >= next_page_ ||
        m.location.slot >= geometry_.slots_per_page) {
      return Status::Corruption(path + ": the journal places vertex " + std::to_string(m.vertex) +
                                " at page " + std::to_string(m.location.page) + " slot " +
                                std::to_string(m.location.slot) + " (" +
                                std::to_string(count) + " vertices, " +
                                std::to_string(next_page_ - 1) + " pages)");
    }
    layout_->where[m.vertex] = m.location;
  }
  for (std::uint32_t v = 0; v < count; ++v) {
    if (layout_->where[v].page == 0) {
      return Status::Corruption(path + ": vertex " + std::to_string(v) +
                                " has no edge list after the journal is replayed");
    }
  }
  if (r.appended > 0) std::memcpy(g.mutable_code(base), r.codes.data(), r.codes.size());
  g.Publish(count);
  // The vector file's last sector: appended vectors share it with the
  // next ones.
  const format::VectorFileLayout& vl = layout_->vectors.layout();
  tail_sector_ = vl.SectorOf(count);
  if (count % vl.vectors_per_sector == 0) return Status::OK();
  const auto span = std::span<std::byte, format::kSector>(tail_.data(), format::kSector);
  const std::uint64_t last = count - 1;
  const std::uint64_t first = (tail_sector_ - 1) * vl.vectors_per_sector;  // its first slot
  Status st = layout_->vectors.file().ReadAt(tail_sector_ * format::kSector, span);
  if (st.ok()) {
    st = format::VerifySector(span, format::FileKind::kVectors, tail_sector_,
                              layout_->vectors.path());
  }
  // Written through (no owner's copies, or the layout's own vectors in it):
  // the file's copy is current, and a torn one is Corruption.
  if (!defer_tail_ || first < base) return st;
  // Written only once full (WriteOut): the file holds an older copy or
  // none (a crash, or a close, since). The owner's copies are current; a
  // slot whose row is gone keeps the file's bytes or zeros (a deleted
  // vertex, never re-ranked).
  if (!st.ok()) std::memset(tail_.data(), 0, format::kSector);
  std::vector<float> row(index_.dim());
  for (std::uint64_t v = first; v <= last; ++v) {
    if (r.vector_of(static_cast<std::uint32_t>(v), row)) {
      std::memcpy(tail_.data() + vl.OffsetOf(v), row.data(), vl.vector_bytes);
    }
  }
  format::SealSector(span, format::FileKind::kVectors, tail_sector_);
  return Status::OK();
}

Status InPlaceUpdater::Sync() {
  if (::fdatasync(edge_file_.fd()) != 0) return Status::FromErrno("fdatasync " + edge_file_.path(), errno);
  if (::fdatasync(vector_file_.fd()) != 0) {
    return Status::FromErrno("fdatasync " + vector_file_.path(), errno);
  }
  return Status::OK();
}

std::span<const std::uint8_t> InPlaceUpdater::code(std::uint32_t v) const {
  const std::uint8_t* c = v < index_.num_slots() ? index_.code(v) : growth().code(v);
  return {c, index_.pq.code_size()};
}

std::optional<std::uint32_t> InPlaceUpdater::VertexOfRow(std::uint64_t row) const {
  const search::DecoupledGrowth& g = growth();
  if (row < g.base_rows()) {
    const std::uint32_t v = index_.SlotOfRow(static_cast<std::uint32_t>(row));
    if (v == kNoRow) return std::nullopt;
    return v;
  }
  if (row - g.base_rows() < g.count() - g.base()) {
    return static_cast<std::uint32_t>(g.base() + (row - g.base_rows()));
  }
  return std::nullopt;
}

Result<std::unique_ptr<search::DecoupledSearchContext>> InPlaceUpdater::TakeSeeker() {
  {
    std::lock_guard<std::mutex> lock(seekers_mu_);
    if (!seekers_.empty()) {
      auto s = std::move(seekers_.back());
      seekers_.pop_back();
      return s;
    }
  }
  return search::DecoupledSearchContext::Create(index_, *layout_, options_.io, options_.beam_width);
}

void InPlaceUpdater::ReturnSeeker(std::unique_ptr<search::DecoupledSearchContext> seeker) {
  if (!seeker) return;
  std::lock_guard<std::mutex> lock(seekers_mu_);
  seekers_.push_back(std::move(seeker));
}

void InPlaceUpdater::Sample(std::uint32_t v, std::span<const float> x) {
  if (entrance_every_ == 0 || (v - growth().base()) % entrance_every_ != 0) return;
  samples_.insert(samples_.end(), x.begin(), x.end());
  sample_slots_.push_back(v);
  if (sample_slots_.size() >= kEntranceBatch) ExtendEntrance();
}

void InPlaceUpdater::ExtendEntrance() {
  if (sample_slots_.empty()) return;
  std::shared_ptr<const search::MemGraph> current = growth().entrance();
  const search::MemGraph& from = current ? *current : index_.mem_graph;
  auto extended = from.Extended(samples_, sample_slots_, 2 * from.max_degree(), options_.alpha);
  samples_.clear();
  sample_slots_.clear();
  // A graph that cannot be extended (out of memory) stays as it is: entry
  // points are a speed-up, not a correctness matter.
  if (extended.ok()) {
    growth().set_entrance(std::make_shared<const search::MemGraph>(std::move(*extended)));
  }
}

void InPlaceUpdater::Decode(std::span<const std::uint32_t> vertices, float* out) const {
  // One call for all: the quantizer rotates rows back a block at a time.
  const std::size_t size = index_.pq.code_size();
  std::vector<std::uint8_t> codes(vertices.size() * size);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    const std::uint32_t v = vertices[i];
    const std::uint8_t* code = v < index_.num_slots() ? index_.code(v) : growth().code(v);
    std::memcpy(codes.data() + i * size, code, size);
  }
  (void)index_.pq.Decode(codes.data(), vertices.size(), out);
}

Status InPlaceUpdater::ReadLists(std::span<const std::uint32_t> vertices, const SeekResult& seek,
                                 std::vector<List>* out, InsertStats* stats) {
  // Lists on pages the position seeking fetched come from its copies, when
  // the page was not reused since the seek began (a page is rewritten only
  // when reused); the others are read, one read per distinct page, all in
  // one batch.
  std::vector<std::uint32_t> pages;
  std::vector<IoRequest*> batch;
  out->clear();
  std::vector<bool> kept(vertices.size(), false);
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    List list{vertices[i], {}, {}};
    const format::EdgeLocation loc = layout_->Location(vertices[i]);
    kept[i] = loc.page < reused_at_.size() && reused_at_[loc.page] <= seek.reuse_seq &&
              seek.seeker->KeptList(vertices[i], loc, &list.ids, &list.vector);
    out->push_back(std::move(list));
  }
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (kept[i]) continue;
    const std::uint32_t page = layout_->Location(vertices[i]).page;
    if (page == 0 || std::find(pages.begin(), pages.end(), page) != pages.end()) continue;
    IoRequest& r = requests_[pages.size()];
    r = IoRequest{};
    r.file = edge_id_;
    r.offset = static_cast<std::uint64_t>(page) * format::kSector;
    r.length = static_cast<std::uint32_t>(format::kSector);
    r.buffer = buffers_.buffer(pages.size());
    pages.push_back(page);
    batch.push_back(&r);
  }
  if (!batch.empty()) {
    STRATA_RETURN_IF_ERROR(queue_->RunToCompletion(batch).WithContext(layout_->edges.path()));
  }
  stats->pages_read += static_cast<std::uint32_t>(pages.size());
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    if (kept[i]) continue;
    const std::uint32_t v = vertices[i];
    const format::EdgeLocation loc = layout_->Location(v);
    List& list = (*out)[i];
    if (loc.page != 0) {
      const std::size_t i = std::find(pages.begin(), pages.end(), loc.page) - pages.begin();
      STRATA_ASSIGN_OR_RETURN(
          format::EdgePageReader page,
          layout_->edges.OpenPage(loc.page, std::span<const std::byte, format::kSector>(
                                                buffers_.buffer(i), format::kSector)));
      STRATA_RETURN_IF_ERROR(ListFromPage(page, loc.slot, &list));
    }
  }
  return Status::OK();
}

Status InPlaceUpdater::ListFromPage(const format::EdgePageReader& page, std::uint32_t slot,
                                    List* list) {
  return page.ReadList(slot, list->vertex, &list->ids, &list->vector);
}

void InPlaceUpdater::PruneList(List* list) {
  const std::size_t dim = index_.dim();
  const std::size_t n = list->ids.size();
  rows_.resize((n + 1) * dim);
  list->ids.push_back(list->vertex);
  Decode(list->ids, rows_.data());
  list->ids.pop_back();
  auto view = graph::VectorView::Create(rows_, dim, index_.metric, index_.kernels);
  std::vector<graph::Neighbor> pool(n);
  for (std::size_t i = 0; i < n; ++i) {
    pool[i] = {static_cast<graph::NodeId>(i),
               view->Distance(static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(i))};
  }
  graph::PruneParams params;
  params.max_degree = options_.R;
  params.alpha = options_.alpha;
  std::vector<graph::NodeId> kept;
  graph::RobustPrune(static_cast<graph::NodeId>(n), &pool, params, *view, &scratch_, &kept);
  std::vector<std::uint32_t> ids;
  for (graph::NodeId k : kept) ids.push_back(list->ids[k]);
  list->ids = std::move(ids);
}

std::uint32_t InPlaceUpdater::AllocatePage(InsertStats* stats) {
  if (!free_.empty()) {
    // A page retired in epoch e is safe once every running search entered
    // after e (it loaded the table after the page's lists had moved).
    if (free_.front().epoch < growth().epochs().OldestActive()) {
      const std::uint32_t page = free_.front().page;
      free_.pop_front();
      ++stats->pages_reused;
      reused_at_[page] = reuse_seq_.fetch_add(1) + 1;
      if (layout_->cache) layout_->cache->Invalidate(page);
      return page;
    }
  }
  const auto page = static_cast<std::uint32_t>(next_page_++);
  live_.push_back(0);
  reused_at_.push_back(0);
  return page;
}

Status InPlaceUpdater::WriteOut(const std::vector<List>& lists,
                                std::vector<format::EdgeLocation>* placed, InsertStats* stats,
                                bool with_vector, const std::vector<HotPage>* hot,
                                std::vector<ListMove>* hot_moves) {
  ++epoch_;
  std::vector<IoRequest*> batch;
  placed->assign(lists.size(), {});
  // Pages taken here go back to the free list if the write fails: nothing
  // names them yet.
  std::vector<std::uint32_t> taken;
  struct GiveBack {
    InPlaceUpdater* u;
    std::vector<std::uint32_t>* taken;
    bool done = false;
    ~GiveBack() {
      if (done) return;
      for (std::uint32_t page : *taken) u->free_.push_front({page, 0});
    }
  } give_back{this, &taken};
  // The next request of the batch: one sector from `buffer` to `offset` of `file`.
  auto add_write = [&](IoFileId file, std::uint64_t offset, std::byte* buffer) {
    IoRequest& r = requests_[batch.size()];
    r = IoRequest{};
    r.op = IoOp::kWrite;
    r.file = file;
    r.offset = offset;
    r.length = static_cast<std::uint32_t>(format::kSector);
    r.buffer = buffer;
    batch.push_back(&r);
  };
  // Hot pages first, whole, their room taking the first of `lists`.
  std::size_t next = 0;
  const std::size_t hot_pages = hot != nullptr ? hot->size() : 0;
  std::vector<const List*> spilled;  // hot pages' changed lists that outgrew them
  for (std::size_t h = 0; h < hot_pages; ++h) {
    const std::uint32_t page_no = AllocatePage(stats);
    taken.push_back(page_no);
    std::byte* buffer = buffers_.buffer(batch.size());
    STRATA_RETURN_IF_ERROR(
        BuildHotPage((*hot)[h], page_no, buffer, lists, &next, placed, hot_moves, &spilled));
    add_write(edge_id_, static_cast<std::uint64_t>(page_no) * format::kSector, buffer);
    stats->lists_written += static_cast<std::uint32_t>((*hot)[h].changed.size());
  }
  // The rest on fresh pages, in order, each page taking lists while they
  // fit; then the spilled ones.
  const std::size_t first_fresh = next;
  std::vector<const List*> fresh;
  for (std::size_t i = first_fresh; i < lists.size(); ++i) fresh.push_back(&lists[i]);
  const std::size_t own = fresh.size();
  fresh.insert(fresh.end(), spilled.begin(), spilled.end());
  std::vector<std::size_t> page_first;  // per fresh page, its first of `fresh`
  std::optional<format::EdgePageWriter> writer;
  std::uint32_t page_no = 0;
  std::byte* buffer = nullptr;
  const auto seal = [&] {
    format::SealSector(std::span<std::byte, format::kSector>(buffer, format::kSector),
                       format::FileKind::kEdgePages, page_no);
    add_write(edge_id_, static_cast<std::uint64_t>(page_no) * format::kSector, buffer);
  };
  for (std::size_t k = 0; k < fresh.size(); ++k) {
    const List& list = *fresh[k];
    if (!writer || !writer->Fits(list.ids.size())) {
      if (writer) {
        // A page closed full: the lists a page holds now (the sparse
        // thresholds follow it, FullPageLists).
        full_page_lists_ += (writer->slots() - full_page_lists_) / 64;
        seal();
      }
      page_no = AllocatePage(stats);
      taken.push_back(page_no);
      buffer = buffers_.buffer(batch.size());
      std::memset(buffer, 0, format::kSector);
      writer.emplace(geometry_,
                     std::span<std::byte, format::kSectorPayload>(buffer, format::kSectorPayload));
      writer->Clear(epoch_);
      page_first.push_back(k);
    }
    STRATA_ASSIGN_OR_RETURN(const std::uint16_t slot,
                            writer->Append(list.vertex, list.ids, list.vector));
    const format::EdgeLocation at{page_no, slot, 0};
    if (k < own) {
      (*placed)[first_fresh + k] = at;
    } else {
      hot_moves->push_back({list.vertex, at});
    }
  }
  if (writer) seal();
  const std::size_t pages = page_first.size();
  page_first.push_back(fresh.size());
  std::uint32_t last_page = 0;
  for (std::uint32_t page : taken) last_page = std::max(last_page, page);
  STRATA_RETURN_IF_ERROR(Reserve(edge_file_, (last_page + 1ull) * format::kSector,
                                 kEdgeReserveBytes, &edge_reserved_));
  if (with_vector && tail_write_due_) {
    STRATA_RETURN_IF_ERROR(Reserve(vector_file_, (tail_sector_ + 1) * format::kSector,
                                   kVectorReserveBytes, &vector_reserved_));
    // The new vector's sector (lists[0] is the new vertex).
    std::byte* vbuf = buffers_.buffer(batch.size());
    std::memcpy(vbuf, tail_.data(), format::kSector);
    add_write(vector_id_, tail_sector_ * format::kSector, vbuf);
  }
  STRATA_RETURN_IF_ERROR(queue_->RunToCompletion(batch));
  give_back.done = true;
  if (layout_->cache) {
    // A hot page's new copy enters the cache as hot as the old one.
    for (std::size_t h = 0; h < hot_pages; ++h) {
      layout_->cache->Offer(taken[h], buffers_.buffer(h), (*hot)[h].heat);
    }
    // Out-of-place writes give hot lists new page numbers: a new page
    // enters the cache as hot as the hottest cached page its lists left,
    // so the hot set follows its lists. Nothing names the new pages before
    // Publish.
    for (std::size_t p = 0; p < pages; ++p) {
      std::uint32_t heat = 0;
      for (std::size_t k = page_first[p]; k < page_first[p + 1]; ++k) {
        const std::uint32_t v = fresh[k]->vertex;
        if (v >= growth().count()) continue;  // the new vertex: no old page
        const std::uint32_t old_page = layout_->Location(v).page;
        if (old_page != 0) heat = std::max(heat, layout_->cache->Heat(old_page));
      }
      if (heat > 0) {
        layout_->cache->Offer(taken[hot_pages + p], buffers_.buffer(hot_pages + p), heat);
      }
    }
  }
  stats->edge_pages_written += static_cast<std::uint32_t>(taken.size());
  stats->hot_pages_rewritten += static_cast<std::uint32_t>(hot_pages);
  stats->lists_spilled += static_cast<std::uint32_t>(spilled.size());
  stats->lists_written += static_cast<std::uint32_t>(lists.size());
  stats->bytes_written += batch.size() * format::kSector;
  return Status::OK();
}

Result<std::uint32_t> InPlaceUpdater::Insert(std::span<const float> vector, InsertStats* stats) {
  SeekResult seek;
  STRATA_RETURN_IF_ERROR(Seek(vector, &seek));
  std::lock_guard<std::mutex> lock(writer_mu_);
  PreparedInsert prepared;
  STRATA_RETURN_IF_ERROR(Prepare(&seek, &prepared));
  const std::uint32_t row = Publish(prepared);
  if (stats != nullptr) *stats = prepared.stats;
  return row;
}

Status InPlaceUpdater::Seek(std::span<const float> vector, SeekResult* out) {
  out->stats = InsertStats{};
  InsertStats* stats = &out->stats;
  STRATA_ASSIGN_OR_RETURN(out->seeker, TakeSeeker());
  out->reuse_seq = reuse_seq_.load();
  // 1. Position seeking over edge pages. Deleted vertices route the walk
  // but are never chosen, so the list is widened by the share of the graph
  // that is live, and widened again while the walk found fewer live
  // candidates than a list needs (a region whose vertices are all deleted
  // would otherwise leave the new vertex without neighbours: FreshDiskANN
  // and IP-DiskANN keep deleted vertices out of the candidates the same way).
  Timer timer;
  const std::uint32_t count = growth().count();
  const std::uint32_t live = count - std::min(count, growth().deleted_count());
  const std::uint32_t base_list = std::max(options_.L, options_.exact_neighbours);
  const std::uint32_t cap = std::min<std::uint32_t>(SearchParams::kMaxListSize, 8 * base_list);
  SearchParams sp;
  sp.k = options_.exact_neighbours;
  sp.list_size = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      cap, std::max<std::uint64_t>(base_list, static_cast<std::uint64_t>(base_list) * count /
                                                  std::max<std::uint32_t>(1, live))));
  sp.beam_width = options_.beam_width;
  std::vector<graph::Neighbor> exact, approximate;
  const std::uint32_t enough = std::min(live, std::max<std::uint32_t>(1, options_.R / 2));
  while (true) {
    QueryStats qs;
    Status explored = out->seeker->Explore(vector, sp, &exact, &approximate, &qs);
    if (!explored.ok()) {
      ReturnSeeker(std::move(out->seeker));
      return explored;
    }
    stats->pages_read += qs.pages_read;
    if (exact.size() + approximate.size() >= enough || sp.list_size >= cap) break;
    sp.list_size = std::min(cap, sp.list_size * 4);
  }
  const std::span<const float> q = out->seeker->prepared_query();
  out->query.assign(q.begin(), q.end());
  stats->seek_us = timer.ElapsedMicros();

  // 2. The new vertex's list: RobustPrune over the explored set, distances
  // between candidates from their decoded codes.
  timer.Reset();
  std::vector<graph::Neighbor> pool = exact;
  pool.insert(pool.end(), approximate.begin(), approximate.end());
  const std::size_t dim = index_.dim();
  const std::size_t n = pool.size();
  std::vector<float> rows((n + 1) * dim);
  std::vector<std::uint32_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = pool[i].id;
  Decode(ids, rows.data());
  std::memcpy(rows.data() + n * dim, q.data(), dim * sizeof(float));
  STRATA_ASSIGN_OR_RETURN(graph::VectorView view,
                          graph::VectorView::Create(rows, dim, index_.metric, index_.kernels));
  std::vector<graph::Neighbor> local(n);
  for (std::size_t i = 0; i < n; ++i) local[i] = {static_cast<graph::NodeId>(i), pool[i].distance};
  graph::PruneParams params;
  params.max_degree = options_.R;
  params.alpha = options_.alpha;
  graph::PruneScratch scratch;
  std::vector<graph::NodeId> chosen;
  graph::RobustPrune(static_cast<graph::NodeId>(n), &local, params, view, &scratch, &chosen);
  out->list.clear();
  for (graph::NodeId c : chosen) out->list.push_back(pool[c].id);
  stats->prune_us = timer.ElapsedMicros();
  return Status::OK();
}

Status InPlaceUpdater::Prepare(SeekResult* seek, PreparedInsert* out) {
  *out = PreparedInsert{};
  out->stats = seek->stats;
  InsertStats* stats = &out->stats;
  struct Return {  // the seeker goes back to the pool, whatever happens
    InPlaceUpdater* u;
    SeekResult* seek;
    ~Return() { u->ReturnSeeker(std::move(seek->seeker)); }
  } give_back{this, seek};
  const std::uint32_t v = growth().count();
  if (v >= growth().capacity()) {
    return Status::OutOfRange("the in-place graph is full (" + std::to_string(v) + " vertices)");
  }
  out->vertex = v;
  const std::span<const float> q = seek->query;
  lists_.assign(1, List{v, seek->list, {}});
  if (geometry_.vector_bytes > 0) {  // the packed baseline: the new list carries its vector
    const auto* bytes = reinterpret_cast<const std::byte*>(q.data());
    lists_[0].vector.assign(bytes, bytes + geometry_.vector_bytes);
  }
  // Unpublished: no search reads vertex v's code before Publish.
  STRATA_RETURN_IF_ERROR(index_.pq.Encode(q.data(), 1, growth().mutable_code(v), 1));

  // 3. Back-edges, pruned on code distances when a list overflows.
  Timer timer;
  std::vector<List> neighbours;
  std::span<const std::uint32_t> linked = lists_[0].ids;  // nearest first (RobustPrune)
  if (options_.back_edges > 0 && linked.size() > options_.back_edges) {
    linked = linked.first(options_.back_edges);
  }
  STRATA_RETURN_IF_ERROR(ReadLists(linked, *seek, &neighbours, stats));
  for (List& list : neighbours) {
    if (std::find(list.ids.begin(), list.ids.end(), v) == list.ids.end()) list.ids.push_back(v);
    if (list.ids.size() > geometry_.capacity) {
      PruneList(&list);
      ++stats->lists_pruned;
    }
    lists_.push_back(std::move(list));
  }
  std::vector<HotPage> hot;
  TakeHotPages(&hot);  // before the sweep: a hot page keeps its lists
  if (options_.sweep_leftovers) SweepLeftovers(*seek, stats);
  stats->prune_us += timer.ElapsedMicros();

  // 4. Out of place: the vector, then every changed list on fresh pages.
  timer.Reset();
  const format::VectorFileLayout& vl = layout_->vectors.layout();
  if (vl.SectorOf(v) != tail_sector_) {
    std::memset(tail_.data(), 0, format::kSector);
    tail_sector_ = vl.SectorOf(v);
  }
  std::memcpy(tail_.data() + vl.OffsetOf(v), q.data(), vl.vector_bytes);
  const auto tail = std::span<std::byte, format::kSector>(tail_.data(), format::kSector);
  format::SealSector(tail, format::FileKind::kVectors, tail_sector_);
  // Searches take the sector from RAM from now on (it holds v before v is
  // published). The file gets it once it is full, unless the owner keeps no
  // copies to rebuild it from after a crash (InPlaceRecovery::vector_of) or
  // it holds the layout's own vectors: NAVIS writes each new vector's
  // sector, which cost a 4 KiB write for a 512-byte vector.
  growth().HoldTail(tail_sector_, tail);
  tail_write_due_ = !defer_tail_ || (v + 1) % vl.vectors_per_sector == 0 ||
                    (tail_sector_ - 1) * vl.vectors_per_sector < growth().base();
  prepared_vector_.assign(q.begin(), q.end());
  std::vector<format::EdgeLocation> placed;
  std::vector<ListMove> hot_moves;
  STRATA_RETURN_IF_ERROR(WriteOut(lists_, &placed, stats, /*with_vector=*/true, &hot, &hot_moves));
  out->moves.resize(lists_.size());
  for (std::size_t i = 0; i < lists_.size(); ++i) out->moves[i] = {lists_[i].vertex, placed[i]};
  out->moves.insert(out->moves.end(), hot_moves.begin(), hot_moves.end());
  stats->write_us = timer.ElapsedMicros();
  return Status::OK();
}

std::uint32_t InPlaceUpdater::Publish(PreparedInsert& prepared) {
  // 5. Switch: the new vertex first (then published), then its neighbours;
  // pages left with no current list are retired.
  Timer timer;
  const std::uint32_t v = prepared.vertex;
  const std::vector<ListMove>& moves = prepared.moves;
  const bool insert = v != format::kNoVertex;
  if (insert) {
    layout_->SetLocation(v, moves[0].location);
    growth().Publish(v + 1);
    Sample(v, prepared_vector_);
  }
  if (!moves.empty()) ++table_changes_;
  std::vector<std::uint32_t> emptied;
  for (std::size_t i = 0; i < moves.size(); ++i) {
    if (i > 0 || !insert) {
      const format::EdgeLocation old = layout_->Location(moves[i].vertex);
      layout_->SetLocation(moves[i].vertex, moves[i].location);
      if (old.page != 0 && --live_[old.page] == 0) emptied.push_back(old.page);
    }
    if (live_[moves[i].location.page]++ == 0) ++live_page_count_;
  }
  if (!emptied.empty()) {
    // A page no list is on any more only holds a cache frame: searches that
    // still walk it read it from the SSD, where it stays until reused.
    if (layout_->cache) {
      for (std::uint32_t page : emptied) layout_->cache->Invalidate(page);
    }
    const std::uint64_t epoch = growth().epochs().Retire();
    for (std::uint32_t page : emptied) free_.push_back({page, epoch});
    live_page_count_ -= emptied.size();
  }
  prepared.stats.publish_us = timer.ElapsedMicros();
  return insert ? growth().base_rows() + (v - growth().base()) : 0;
}

}  // namespace strata::update
