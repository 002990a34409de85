// Hot pages rewritten whole (InPlaceOptions::hot_page_heat). An insert
// changes some twenty lists; moved one by one onto the insert's fresh pages,
// the lists of the pages every walk reads (near the entry points, around
// hubs) end up scattered, one hot list among cold ones per page, and the
// hot-page cache holds ever more pages for the same hot lists. NAVIS (Sun
// et al., "NAVIS: Concurrent Search and Update with Low Position-Seeking
// Overhead in On-SSD Graph-Based Vector Search") writes a dirty cached page
// back; here the page, copied from the cache with its changed lists put
// in, is written out of place like every other write, so a crash still
// leaves the old page valid until the journal names the new one. A changed
// list that has grown past the page's room goes to the insert's fresh
// pages instead.
#include <algorithm>
#include <cstring>

#include "update/in_place_updater.h"

namespace strata::update {
namespace {

// Hot pages one insert rewrites at most: each is a buffer and a write of
// its own beside the insert's fresh pages.
constexpr std::size_t kMaxHotPages = 8;

}  // namespace

void InPlaceUpdater::TakeHotPages(std::vector<HotPage>* out) {
  out->clear();
  if (options_.hot_page_heat == 0 || !layout_->cache || lists_.size() < 2) return;
  std::vector<std::uint32_t> cold;  // pages found not hot enough
  std::vector<List> kept;
  kept.reserve(lists_.size());
  kept.push_back(std::move(lists_[0]));  // the new vertex's: no page yet
  for (std::size_t i = 1; i < lists_.size(); ++i) {
    const std::uint32_t page = layout_->Location(lists_[i].vertex).page;
    auto hot = std::find_if(out->begin(), out->end(),
                            [page](const HotPage& h) { return h.page == page; });
    if (hot == out->end() && page != 0 && out->size() < kMaxHotPages &&
        std::find(cold.begin(), cold.end(), page) == cold.end()) {
      if (layout_->cache->Heat(page) >= options_.hot_page_heat) {
        HotPage h;
        h.page = page;
        h.bytes.resize(format::kSector);
        // Evicted meanwhile by a search's admission: then not hot after all.
        h.heat = layout_->cache->Peek(page, h.bytes.data());
        if (h.heat > 0) {
          out->push_back(std::move(h));
          hot = out->end() - 1;
        }
      }
      if (hot == out->end()) cold.push_back(page);
    }
    if (hot != out->end()) {
      hot->changed.push_back(std::move(lists_[i]));
    } else {
      kept.push_back(std::move(lists_[i]));
    }
  }
  lists_ = std::move(kept);
}

Status InPlaceUpdater::BuildHotPage(const HotPage& hot, std::uint32_t page_no, std::byte* buffer,
                                    const std::vector<List>& lists, std::size_t* next,
                                    std::vector<format::EdgeLocation>* placed,
                                    std::vector<ListMove>* moves,
                                    std::vector<const List*>* spilled) {
  STRATA_ASSIGN_OR_RETURN(
      format::EdgePageReader old,
      format::EdgePageReader::Open(geometry_, std::span<const std::byte, format::kSectorPayload>(
                                                  hot.bytes.data(), format::kSectorPayload)));
  std::memset(buffer, 0, format::kSector);
  format::EdgePageWriter writer(
      geometry_, std::span<std::byte, format::kSectorPayload>(buffer, format::kSectorPayload));
  writer.Clear(epoch_);
  const std::uint32_t count = growth().count();
  const auto put = [&](const List& list) -> Status {
    STRATA_ASSIGN_OR_RETURN(const std::uint16_t slot,
                            writer.Append(list.vertex, list.ids, list.vector));
    moves->push_back({list.vertex, {page_no, slot, 0}});
    return Status::OK();
  };
  // Its unchanged lists first (they fitted beside the changed ones' old
  // versions), then the changed ones while they fit.
  std::size_t changed_found = 0;
  List unchanged;
  for (std::uint32_t s = 0; s < old.slots(); ++s) {
    const std::uint32_t u = old.vertex(s);
    if (u >= count) continue;  // an unused slot (kNoVertex)
    const format::EdgeLocation loc = layout_->Location(u);
    if (loc.page != hot.page || loc.slot != s) continue;  // a stale copy: the list moved away
    if (std::any_of(hot.changed.begin(), hot.changed.end(),
                    [u](const List& l) { return l.vertex == u; })) {
      ++changed_found;
      continue;
    }
    unchanged.vertex = u;
    STRATA_RETURN_IF_ERROR(ListFromPage(old, s, &unchanged));
    STRATA_RETURN_IF_ERROR(put(unchanged));
  }
  if (changed_found != hot.changed.size()) {
    return Status::Corruption("hot page " + std::to_string(hot.page) + ": " +
                            std::to_string(hot.changed.size() - changed_found) +
                            " changed lists not on it");
  }
  for (const List& list : hot.changed) {
    if (writer.Fits(list.ids.size())) {
      STRATA_RETURN_IF_ERROR(put(list));
    } else {
      spilled->push_back(&list);
    }
  }
  while (*next < lists.size() && writer.Fits(lists[*next].ids.size())) {
    const List& list = lists[*next];
    STRATA_ASSIGN_OR_RETURN(const std::uint16_t slot,
                            writer.Append(list.vertex, list.ids, list.vector));
    (*placed)[*next] = {page_no, slot, 0};
    ++*next;
  }
  format::SealSector(std::span<std::byte, format::kSector>(buffer, format::kSector),
                     format::FileKind::kEdgePages, page_no);
  return Status::OK();
}

}  // namespace strata::update
