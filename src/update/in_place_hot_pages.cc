// Hot pages rewritten whole (InPlaceOptions::hot_page_heat). An insert
// changes some twenty lists; moved one by one onto the insert's fresh pages,
// the lists of the pages every walk reads (near the entry points, around
// hubs) end up scattered, one hot list among cold ones per page, and the
// hot-page cache holds ever more pages for the same hot lists. NAVIS (Sun
// et al., "NAVIS: Concurrent Search and Update with Low Position-Seeking
// Overhead in On-SSD Graph-Based Vector Search") writes a dirty cached page
// back; here the page, copied from the cache with its changed lists put
// in, is written out of place like every other write, so a crash still
// leaves the old page valid until the journal names the new one.
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
                                    std::vector<ListMove>* moves) {
  STRATA_ASSIGN_OR_RETURN(
      format::EdgePageReader old,
      format::EdgePageReader::Open(geometry_, std::span<const std::byte, format::kSectorPayload>(
                                                  hot.bytes.data(), format::kSectorPayload)));
  std::memset(buffer, 0, format::kSector);
  format::EdgePageWriter writer(
      geometry_, std::span<std::byte, format::kSectorPayload>(buffer, format::kSectorPayload));
  writer.Clear(epoch_);
  const std::uint32_t spp = geometry_.slots_per_page;
  const std::uint32_t count = growth().count();
  std::vector<bool> taken(spp, false);
  std::size_t changed_found = 0;
  std::vector<std::uint32_t> ids;
  for (std::uint32_t s = 0; s < spp; ++s) {
    const std::uint32_t u = old.vertex(s);
    if (u >= count) continue;  // a free slot (kNoVertex)
    const format::EdgeLocation loc = layout_->Location(u);
    if (loc.page != hot.page || loc.slot != s) continue;  // a stale copy: the list moved away
    auto changed = std::find_if(hot.changed.begin(), hot.changed.end(),
                                [u](const List& l) { return l.vertex == u; });
    if (changed != hot.changed.end()) {
      STRATA_RETURN_IF_ERROR(writer.Put(s, u, changed->ids, changed->vector));
      ++changed_found;
    } else {
      STRATA_RETURN_IF_ERROR(old.ReadList(s, u, &ids));
      STRATA_RETURN_IF_ERROR(writer.Put(s, u, ids, old.Vector(s)));
    }
    taken[s] = true;
    moves->push_back({u, {page_no, static_cast<std::uint16_t>(s), 0}});
  }
  if (changed_found != hot.changed.size()) {
    return Status::Corruption("hot page " + std::to_string(hot.page) + ": " +
                            std::to_string(hot.changed.size() - changed_found) +
                            " changed lists not on it");
  }
  for (std::uint32_t s = 0; s < spp && *next < lists.size(); ++s) {
    if (taken[s]) continue;
    const List& list = lists[*next];
    STRATA_RETURN_IF_ERROR(writer.Put(s, list.vertex, list.ids, list.vector));
    (*placed)[*next] = {page_no, static_cast<std::uint16_t>(s), 0};
    ++*next;
  }
  format::SealSector(std::span<std::byte, format::kSector>(buffer, format::kSector),
                     format::FileKind::kEdgePages, page_no);
  return Status::OK();
}

}  // namespace strata::update
