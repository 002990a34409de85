// Compaction of sparse edge pages on the in-place layout. Out-of-place
// writes (NAVIS) move each changed list to a fresh page, so the pages a
// list leaves keep their other lists and empty only when every one of them
// has moved too: the file grows and a walk, which fetches a page per list
// it expands, reads pages that hold few lists it wants. Compaction gathers
// the lists of sparse pages from a neighbourhood — a breadth-first walk
// over the graph's edges restricted to sparse pages, in the spirit of the
// locality-preserving page layouts of Gorder (Wei et al., "Speedup Graph
// Processing by Graph Ordering") and Starling (Wang et al., "Starling: An
// I/O-Efficient Disk-Resident Graph Index Framework for High-Dimensional
// Vector Similarity Search on Data Segment") — orders them by a
// breadth-first walk among themselves, and writes them onto full pages, so
// that the pages they leave are reused and neighbours share a page again.
#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/timer.h"
#include "update/in_place_updater.h"

namespace strata::update {
namespace {

// Pages read per round of the gathering walk, rounds per compaction, and
// the full pages' worth of lists a compaction gathers at most (about the
// pages it writes). Each bounds the time the writer lock is held (inserts
// wait).
constexpr std::size_t kPagesPerRound = 24;
constexpr int kMaxRounds = 2;
constexpr double kPagesPerCompaction = 6;

}  // namespace

bool InPlaceUpdater::CompactionDue(double slack) const {
  const double fewest = std::ceil(growth().count() / FullPageLists());
  return static_cast<double>(live_page_count_) > fewest * (1.0 + slack) + 1.0;
}

Status InPlaceUpdater::PrepareCompaction(PreparedInsert* out, double slack, double sparse_fill) {
  *out = PreparedInsert{};
  out->vertex = format::kNoVertex;
  if (!CompactionDue(slack)) return Status::OK();
  Timer timer;
  const auto full = static_cast<std::uint32_t>(FullPageLists());
  const auto sparse = static_cast<std::uint16_t>(std::clamp<std::uint32_t>(
      static_cast<std::uint32_t>(sparse_fill * full), 1, std::max<std::uint32_t>(1, full - 1)));
  if (table_changes_ == none_sparse_changes_ && sparse <= none_sparse_below_) return Status::OK();
  const auto is_sparse = [&](std::uint32_t page) {
    return page != 0 && page < live_.size() && live_[page] > 0 && live_[page] <= sparse;
  };
  // The next sparse page from the cursor (round robin over the file).
  const auto next_seed = [&]() -> std::uint32_t {
    const auto pages = static_cast<std::uint32_t>(live_.size());
    for (std::uint32_t n = 0; n + 1 < pages; ++n) {
      if (compact_cursor_ >= pages || compact_cursor_ == 0) compact_cursor_ = 1;
      const std::uint32_t p = compact_cursor_++;
      if (is_sparse(p)) return p;
    }
    none_sparse_changes_ = table_changes_;
    none_sparse_below_ = sparse;
    return 0;
  };
  const auto most_lists = static_cast<std::size_t>(kPagesPerCompaction * FullPageLists());
  std::unordered_set<std::uint32_t> absorbed;
  std::vector<List> gathered;
  std::vector<std::uint32_t> frontier;
  if (const std::uint32_t seed = next_seed(); seed != 0) frontier.push_back(seed);
  for (int round = 0; round < kMaxRounds && !frontier.empty() &&
                      gathered.size() < most_lists;
       ++round) {
    // One batch of reads for the round's pages.
    std::vector<IoRequest*> batch;
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      absorbed.insert(frontier[i]);
      IoRequest& r = requests_[i];
      r = IoRequest{};
      r.file = edge_id_;
      r.offset = static_cast<std::uint64_t>(frontier[i]) * format::kSector;
      r.length = static_cast<std::uint32_t>(format::kSector);
      r.buffer = buffers_.buffer(i);
      batch.push_back(&r);
    }
    STRATA_RETURN_IF_ERROR(queue_->RunToCompletion(batch).WithContext(layout_->edges.path()));
    out->stats.pages_read += static_cast<std::uint32_t>(batch.size());
    const std::size_t first_new = gathered.size();
    for (std::size_t i = 0; i < frontier.size(); ++i) {
      const std::uint32_t page_no = frontier[i];
      STRATA_ASSIGN_OR_RETURN(
          format::EdgePageReader page,
          layout_->edges.OpenPage(page_no, std::span<const std::byte, format::kSector>(
                                               buffers_.buffer(i), format::kSector)));
      for (std::uint32_t s = 0; s < page.slots(); ++s) {
        const std::uint32_t v = page.vertex(s);
        if (v >= growth().count()) continue;
        const format::EdgeLocation loc = layout_->Location(v);
        if (loc.page != page_no || loc.slot != s) continue;  // a stale copy
        List list{v, {}, {}};
        STRATA_RETURN_IF_ERROR(ListFromPage(page, s, &list));
        gathered.push_back(std::move(list));
      }
    }
    // The next round: sparse pages the new lists point into.
    frontier.clear();
    for (std::size_t i = first_new; i < gathered.size() && frontier.size() < kPagesPerRound; ++i) {
      for (std::uint32_t w : gathered[i].ids) {
        if (w >= growth().count()) continue;
        const std::uint32_t page = layout_->Location(w).page;
        if (!is_sparse(page) || absorbed.count(page) ||
            std::find(frontier.begin(), frontier.end(), page) != frontier.end()) {
          continue;
        }
        frontier.push_back(page);
        if (frontier.size() >= kPagesPerRound) break;
      }
    }
    if (frontier.empty() && gathered.size() < most_lists) {
      if (const std::uint32_t seed = next_seed(); seed != 0 && !absorbed.count(seed)) {
        frontier.push_back(seed);
      }
    }
  }
  // Lists that would not leave a page behind are not worth a write: a
  // compaction that frees fewer pages than it fills is skipped.
  std::size_t gathered_bytes = 0;
  for (const List& list : gathered) gathered_bytes += geometry_.ListBytes(list.ids.size());
  const std::size_t written_pages =
      (gathered_bytes + format::kEdgePageRoom - 1) / format::kEdgePageRoom;
  if (gathered.empty() || absorbed.size() <= written_pages) return Status::OK();
  // Breadth-first order among the gathered lists: neighbours end up on one
  // page where they can.
  std::unordered_map<std::uint32_t, std::uint32_t> index_of;
  for (std::size_t i = 0; i < gathered.size(); ++i) {
    index_of.emplace(gathered[i].vertex, static_cast<std::uint32_t>(i));
  }
  std::vector<bool> placed_yet(gathered.size(), false);
  std::vector<std::uint32_t> order;
  order.reserve(gathered.size());
  for (std::size_t start = 0; start < gathered.size(); ++start) {
    if (placed_yet[start]) continue;
    placed_yet[start] = true;
    order.push_back(static_cast<std::uint32_t>(start));
    for (std::size_t head = order.size() - 1; head < order.size(); ++head) {
      for (std::uint32_t w : gathered[order[head]].ids) {
        auto it = index_of.find(w);
        if (it == index_of.end() || placed_yet[it->second]) continue;
        placed_yet[it->second] = true;
        order.push_back(it->second);
      }
    }
  }
  lists_.clear();
  for (std::uint32_t i : order) lists_.push_back(std::move(gathered[i]));
  out->stats.prune_us = timer.ElapsedMicros();
  timer.Reset();
  std::vector<format::EdgeLocation> placed;
  STRATA_RETURN_IF_ERROR(WriteOut(lists_, &placed, &out->stats, /*with_vector=*/false));
  out->moves.resize(lists_.size());
  for (std::size_t i = 0; i < lists_.size(); ++i) out->moves[i] = {lists_[i].vertex, placed[i]};
  out->stats.lists_written = static_cast<std::uint32_t>(lists_.size());
  out->stats.write_us = timer.ElapsedMicros();
  return Status::OK();
}

void InPlaceUpdater::SweepLeftovers(const SeekResult& seek, InsertStats* stats) {
  const auto keep_at_most = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(FullPageLists() / 4));
  // The old pages of the changed lists (lists_[0] is the new vertex's) and
  // how many of their lists leave.
  std::vector<std::pair<std::uint32_t, std::uint32_t>> leaving;
  std::vector<std::uint32_t> changed;
  for (std::size_t i = 1; i < lists_.size(); ++i) {
    changed.push_back(lists_[i].vertex);
    const std::uint32_t page = layout_->Location(lists_[i].vertex).page;
    if (page == 0) continue;
    auto it = std::find_if(leaving.begin(), leaving.end(),
                           [page](const auto& e) { return e.first == page; });
    if (it == leaving.end()) {
      leaving.emplace_back(page, 1);
    } else {
      ++it->second;
    }
  }
  std::sort(changed.begin(), changed.end());
  const std::uint32_t count = growth().count();
  for (const auto& [page, n] : leaving) {
    const std::uint32_t left = live_[page] - std::min<std::uint32_t>(live_[page], n);
    if (left == 0 || left > keep_at_most) continue;
    // The seek's copy is current unless the page was reused since it began.
    if (page >= reused_at_.size() || reused_at_[page] > seek.reuse_seq) continue;
    const std::byte* sector = seek.seeker->KeptPage(page);
    if (sector == nullptr) continue;
    auto reader = format::EdgePageReader::Open(
        geometry_, std::span<const std::byte, format::kSectorPayload>(sector, format::kSectorPayload));
    if (!reader.ok()) continue;
    for (std::uint32_t s = 0; s < reader->slots(); ++s) {
      const std::uint32_t u = reader->vertex(s);
      if (u >= count || std::binary_search(changed.begin(), changed.end(), u)) continue;
      const format::EdgeLocation loc = layout_->Location(u);
      if (loc.page != page || loc.slot != s) continue;  // moved away since
      List list{u, {}, {}};
      if (!ListFromPage(*reader, s, &list).ok()) continue;
      lists_.push_back(std::move(list));
      ++stats->lists_swept;
    }
  }
}

}  // namespace strata::update
