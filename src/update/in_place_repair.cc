// Repairs after deletes, in place (NAVIS): the in-neighbours of a deleted
// vertex are found by a search for its code and given edges to its live
// out-neighbours, as IP-DiskANN (Xu et al., "In-Place Updates of a Graph
// Index for Streaming Approximate Nearest Neighbor Search") does, and the
// lists written out of place like an insert's.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "base/timer.h"
#include "update/in_place_updater.h"

namespace strata::update {

Status InPlaceUpdater::SeekRepair(std::uint64_t row, SeekResult* out) {
  out->stats = InsertStats{};
  const std::optional<std::uint32_t> v = VertexOfRow(row);
  if (!v || !growth().deleted(*v)) {
    return Status::NotFound("row " + std::to_string(row) + " is not a deleted row of the graph");
  }
  out->repair = *v;
  // Its in-neighbours are near it: a search for its (decoded) code meets
  // them (IP-DiskANN approximates them the same way).
  std::vector<float> query(index_.dim());
  Decode(std::span<const std::uint32_t>(&*v, 1), query.data());
  STRATA_ASSIGN_OR_RETURN(out->seeker, TakeSeeker());
  out->reuse_seq = reuse_seq_.load();
  Timer timer;
  SearchParams sp;
  sp.k = 1;
  sp.list_size = options_.L;
  sp.beam_width = options_.beam_width;
  std::vector<graph::Neighbor> exact, approximate;
  QueryStats qs;
  Status explored = out->seeker->Explore(query, sp, &exact, &approximate, &qs);
  if (!explored.ok()) {
    ReturnSeeker(std::move(out->seeker));
    return explored;
  }
  out->stats.pages_read += qs.pages_read;
  out->list.clear();
  for (const auto* set : {&exact, &approximate}) {
    for (const graph::Neighbor& n : *set) out->list.push_back(n.id);
  }
  out->stats.seek_us = timer.ElapsedMicros();
  return Status::OK();
}

Status InPlaceUpdater::PrepareRepair(SeekResult* seek, PreparedInsert* out) {
  *out = PreparedInsert{};
  out->vertex = format::kNoVertex;
  out->stats = seek->stats;
  struct Return {
    InPlaceUpdater* u;
    SeekResult* seek;
    ~Return() { u->ReturnSeeker(std::move(seek->seeker)); }
  } give_back{this, seek};
  const std::uint32_t d = seek->repair;
  Timer timer;
  std::vector<std::uint32_t> vertices = {d};
  vertices.insert(vertices.end(), seek->list.begin(), seek->list.end());
  std::vector<List> lists;
  STRATA_RETURN_IF_ERROR(ReadLists(vertices, *seek, &lists, &out->stats));
  // d's live out-neighbours, each decoded once, and the lists' owners.
  std::vector<std::uint32_t> replacements;
  for (std::uint32_t r : lists[0].ids) {
    if (r < growth().count() && !growth().deleted(r)) replacements.push_back(r);
  }
  std::vector<std::uint32_t> owners;
  for (std::size_t i = 1; i < lists.size(); ++i) owners.push_back(lists[i].vertex);
  const std::size_t dim = index_.dim();
  std::vector<float> offered(replacements.size() * dim), owner(owners.size() * dim);
  Decode(replacements, offered.data());
  Decode(owners, owner.data());
  lists_.clear();
  for (std::size_t i = 1; i < lists.size(); ++i) {
    List& list = lists[i];
    auto at = std::find(list.ids.begin(), list.ids.end(), d);
    if (at == list.ids.end()) continue;
    list.ids.erase(at);
    // Up to kRepairEdges of d's live out-neighbours, nearest to it first.
    const float* a = owner.data() + (i - 1) * dim;
    std::vector<std::pair<float, std::uint32_t>> offers;
    for (std::size_t k = 0; k < replacements.size(); ++k) {
      const std::uint32_t r = replacements[k];
      if (r == list.vertex || std::find(list.ids.begin(), list.ids.end(), r) != list.ids.end()) {
        continue;
      }
      offers.emplace_back(index_.kernels->l2_f32(a, offered.data() + k * dim, dim), r);
    }
    std::sort(offers.begin(), offers.end());
    for (std::size_t k = 0; k < offers.size() && k < kRepairEdges; ++k) {
      list.ids.push_back(offers[k].second);
    }
    if (list.ids.size() > geometry_.capacity) {
      PruneList(&list);
      ++out->stats.lists_pruned;
    }
    lists_.push_back(std::move(list));
  }
  out->stats.prune_us = timer.ElapsedMicros();
  if (lists_.empty()) return Status::OK();
  timer.Reset();
  std::vector<format::EdgeLocation> placed;
  STRATA_RETURN_IF_ERROR(WriteOut(lists_, &placed, &out->stats, /*with_vector=*/false));
  out->moves.resize(lists_.size());
  for (std::size_t i = 0; i < lists_.size(); ++i) out->moves[i] = {lists_[i].vertex, placed[i]};
  out->stats.write_us = timer.ElapsedMicros();
  return Status::OK();
}

Status InPlaceUpdater::Delete(std::uint32_t row) {
  const std::optional<std::uint32_t> v = VertexOfRow(row);
  if (!v || growth().deleted(*v)) {
    return Status::NotFound("row " + std::to_string(row) + " is not in the graph");
  }
  growth().MarkDeleted(*v);
  return Status::OK();
}

}  // namespace strata::update
