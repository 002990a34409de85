#include "strata/in_place_graph.h"

#include <optional>

#include "index/graph_index_impl.h"
#include "update/in_place_updater.h"

namespace strata {

struct InPlaceGraph::State {
  std::unique_ptr<GraphIndex> index;
  std::unique_ptr<update::InPlaceUpdater> updater;
};

InPlaceGraph::InPlaceGraph(std::unique_ptr<State> state) : state_(std::move(state)) {}
InPlaceGraph::~InPlaceGraph() = default;

Result<std::unique_ptr<InPlaceGraph>> InPlaceGraph::Open(const std::string& index_dir,
                                                         const std::string& decoupled_dir,
                                                         const InPlaceGraphOptions& options,
                                                         OpenOptions open,
                                                         const InPlaceRecovery* recovery) {
  open.decoupled_dir = decoupled_dir;
  open.decoupled_grown = recovery != nullptr;
  auto state = std::make_unique<State>();
  STRATA_ASSIGN_OR_RETURN(state->index, GraphIndex::Open(index_dir, open));
  // No searcher exists yet: the layout may still be changed here.
  auto& impl = const_cast<GraphIndex::Impl&>(*state->index->impl_);
  std::optional<update::InPlaceRecovery> replay;
  if (recovery != nullptr) {
    replay.emplace();
    replay->moves.reserve(recovery->moves.size());
    for (const InPlaceListMove& m : recovery->moves) {
      replay->moves.push_back({m.vertex, format::EdgeLocation{m.page, m.slot, 0}});
    }
    replay->appended = recovery->appended;
    replay->codes = recovery->codes;
    replay->vector_of = recovery->vector_of;
  }
  update::InPlaceOptions u;
  u.capacity = options.capacity;
  u.R = options.R;
  u.L = options.L;
  u.beam_width = options.beam_width;
  u.exact_neighbours = options.exact_neighbours;
  u.alpha = options.alpha;
  u.back_edges = options.back_edges;
  u.entrance_updates = options.entrance_updates;
  u.sweep_leftovers = options.sweep_leftovers;
  u.hot_page_heat = options.hot_page_heat;
  u.io.engine = open.io_engine;
  STRATA_ASSIGN_OR_RETURN(state->updater,
                          update::InPlaceUpdater::Create(impl.data, &*impl.decoupled, u,
                                                         replay ? &*replay : nullptr));
  impl.decoupled->growth->set_search_hides_deleted(options.search_hides_deleted);
  return std::unique_ptr<InPlaceGraph>(new InPlaceGraph(std::move(state)));
}

namespace {

InsertReport ToReport(const update::InsertStats& s) {
  return InsertReport{s.pages_read,         s.lists_written, s.lists_pruned,
                      s.edge_pages_written, s.pages_reused,  s.bytes_written,
                      s.seek_us,            s.prune_us,      s.write_us,
                      s.publish_us,         s.hot_pages_rewritten, s.lists_swept,
                      s.lists_spilled};
}

// A repair's or a compaction's prepared moves (no new vertex), holding
// the writer lock until Commit.
void Relink(const update::PreparedInsert& p, std::unique_lock<std::mutex> lock,
            PreparedInPlaceInsert* out) {
  out->writer_lock = std::move(lock);
  out->vertex = InPlaceGraph::kNoVertex;
  out->row = 0;
  out->moves.clear();
  for (const update::ListMove& m : p.moves) {
    out->moves.push_back({m.vertex, m.location.page, m.location.slot});
  }
  out->code.clear();
  out->report = ToReport(p.stats);
}

}  // namespace

Status InPlaceGraph::Prepare(std::span<const float> vector, PreparedInPlaceInsert* out) {
  update::SeekResult seek;
  STRATA_RETURN_IF_ERROR(state_->updater->Seek(vector, &seek));
  std::unique_lock<std::mutex> lock(state_->updater->writer_mutex());
  update::PreparedInsert p;
  STRATA_RETURN_IF_ERROR(state_->updater->Prepare(&seek, &p));
  out->writer_lock = std::move(lock);
  out->vertex = p.vertex;
  out->row = base_rows() + (p.vertex - base_vertices());
  out->moves.clear();
  for (const update::ListMove& m : p.moves) {
    out->moves.push_back({m.vertex, m.location.page, m.location.slot});
  }
  const auto code = state_->updater->code(p.vertex);
  out->code.assign(code.begin(), code.end());
  out->report = ToReport(p.stats);
  return Status::OK();
}

Status InPlaceGraph::PrepareRepair(std::uint64_t row, PreparedInPlaceInsert* out) {
  update::SeekResult seek;
  STRATA_RETURN_IF_ERROR(state_->updater->SeekRepair(row, &seek));
  std::unique_lock<std::mutex> lock(state_->updater->writer_mutex());
  update::PreparedInsert p;
  STRATA_RETURN_IF_ERROR(state_->updater->PrepareRepair(&seek, &p));
  Relink(p, std::move(lock), out);
  out->row = row;
  return Status::OK();
}

Status InPlaceGraph::PrepareCompaction(PreparedInPlaceInsert* out, double slack,
                                       double sparse_fill) {
  std::unique_lock<std::mutex> lock(state_->updater->writer_mutex());
  update::PreparedInsert p;
  STRATA_RETURN_IF_ERROR(state_->updater->PrepareCompaction(&p, slack, sparse_fill));
  Relink(p, std::move(lock), out);
  return Status::OK();
}

void InPlaceGraph::Commit(PreparedInPlaceInsert* prepared) {
  update::PreparedInsert p;
  p.vertex = prepared->vertex;
  for (const InPlaceListMove& m : prepared->moves) {
    p.moves.push_back({m.vertex, format::EdgeLocation{m.page, m.slot, 0}});
  }
  if (p.vertex != kNoVertex || !p.moves.empty()) state_->updater->Publish(p);
  prepared->report.publish_us = p.stats.publish_us;
  if (prepared->writer_lock.owns_lock()) prepared->writer_lock.unlock();
}

Status InPlaceGraph::Sync() { return state_->updater->Sync(); }

std::uint32_t InPlaceGraph::num_vertices() const { return state_->updater->num_vertices(); }
std::uint32_t InPlaceGraph::base_vertices() const {
  return static_cast<std::uint32_t>(state_->index->impl_->data.num_slots());
}
std::uint64_t InPlaceGraph::base_rows() const { return state_->index->impl_->data.num_nodes(); }
std::uint32_t InPlaceGraph::capacity() const { return state_->updater->capacity(); }
std::size_t InPlaceGraph::code_size() const { return state_->index->impl_->data.pq.code_size(); }

Result<std::uint32_t> InPlaceGraph::Insert(std::span<const float> vector, InsertReport* report) {
  update::InsertStats s;
  STRATA_ASSIGN_OR_RETURN(std::uint32_t row, state_->updater->Insert(vector, &s));
  if (report != nullptr) *report = ToReport(s);
  return row;
}

Status InPlaceGraph::Delete(std::uint32_t row) { return state_->updater->Delete(row); }

const Index& InPlaceGraph::index() const { return *state_->index; }

std::uint64_t InPlaceGraph::num_rows() const {
  return base_rows() + (state_->updater->num_vertices() - base_vertices());
}

// The writer's counters, read under its lock (an applier may be mid-insert).
std::uint64_t InPlaceGraph::edge_pages() const {
  std::lock_guard<std::mutex> lock(state_->updater->writer_mutex());
  return state_->updater->num_pages();
}
std::uint64_t InPlaceGraph::free_edge_pages() const {
  std::lock_guard<std::mutex> lock(state_->updater->writer_mutex());
  return state_->updater->free_pages();
}
std::uint64_t InPlaceGraph::live_edge_pages() const {
  std::lock_guard<std::mutex> lock(state_->updater->writer_mutex());
  return state_->updater->live_pages();
}

}  // namespace strata
