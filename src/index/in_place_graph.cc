#include "strata/in_place_graph.h"

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
                                                         OpenOptions open) {
  if (open.cache_mib != 0) {
    return Status::NotSupported("the in-place graph does not use the edge-page cache yet");
  }
  open.decoupled_dir = decoupled_dir;
  auto state = std::make_unique<State>();
  STRATA_ASSIGN_OR_RETURN(state->index, GraphIndex::Open(index_dir, open));
  // No searcher exists yet: the layout may still be changed here.
  auto& impl = const_cast<GraphIndex::Impl&>(*state->index->impl_);
  update::InPlaceOptions u;
  u.capacity = options.capacity;
  u.R = options.R;
  u.L = options.L;
  u.beam_width = options.beam_width;
  u.exact_neighbours = options.exact_neighbours;
  u.alpha = options.alpha;
  u.io.engine = open.io_engine;
  STRATA_ASSIGN_OR_RETURN(state->updater,
                          update::InPlaceUpdater::Create(impl.data, &*impl.decoupled, u));
  return std::unique_ptr<InPlaceGraph>(new InPlaceGraph(std::move(state)));
}

Result<std::uint32_t> InPlaceGraph::Insert(std::span<const float> vector, InsertReport* report) {
  update::InsertStats s;
  STRATA_ASSIGN_OR_RETURN(std::uint32_t row, state_->updater->Insert(vector, &s));
  if (report != nullptr) {
    *report = InsertReport{s.pages_read,         s.lists_written, s.lists_pruned,
                           s.edge_pages_written, s.pages_reused,  s.bytes_written,
                           s.seek_us,            s.prune_us,      s.write_us,
                           s.publish_us};
  }
  return row;
}

Status InPlaceGraph::Delete(std::uint32_t row) { return state_->updater->Delete(row); }

const Index& InPlaceGraph::index() const { return *state_->index; }

std::uint64_t InPlaceGraph::num_rows() const {
  return state_->index->impl_->data.num_nodes() +
         (state_->updater->num_vertices() - state_->index->impl_->data.num_slots());
}

std::uint64_t InPlaceGraph::edge_pages() const { return state_->updater->num_pages(); }
std::uint64_t InPlaceGraph::free_edge_pages() const { return state_->updater->free_pages(); }

}  // namespace strata
