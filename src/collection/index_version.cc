#include "collection/index_version.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>

#include "base/checksum.h"
#include "base/sorted_lookup.h"
#include "strata/graph_index.h"
#include "strata/io.h"

namespace strata::collection {
namespace {

constexpr char kSlotsMagic[8] = {'S', 'T', 'R', 'S', 'L', 'O', 'T', '1'};
constexpr std::size_t kSlotsHeader = 24;
// Searchers are created with at least these widths so the pool can serve
// the usual parameter range with one kind of searcher.
constexpr std::uint32_t kPoolWidth = 64;
constexpr std::uint64_t kNoSlot = ~std::uint64_t{0};

void PutU64(std::byte* out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}
std::uint64_t GetU64(const std::byte* in) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint8_t>(in[i]);
  return v;
}

}  // namespace

Status WriteSlotsFile(const std::string& dir, std::span<const VectorId> slot_ids) {
  std::vector<std::byte> bytes(kSlotsHeader + slot_ids.size() * 8);
  std::memcpy(bytes.data(), kSlotsMagic, 8);
  PutU64(bytes.data() + 8, slot_ids.size());
  for (std::size_t i = 0; i < slot_ids.size(); ++i) {
    PutU64(bytes.data() + kSlotsHeader + i * 8, slot_ids[i]);
  }
  PutU64(bytes.data() + 16,
         Checksum64(bytes.data() + kSlotsHeader, bytes.size() - kSlotsHeader));
  STRATA_ASSIGN_OR_RETURN(AtomicFileWriter writer,
                          AtomicFileWriter::Create(dir + "/" + kSlotsFile));
  STRATA_RETURN_IF_ERROR(writer.Append(bytes));
  return writer.Commit();
}

Result<std::vector<VectorId>> ReadSlotsFile(const std::string& dir) {
  const std::string path = dir + "/" + kSlotsFile;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Corruption("collection: missing " + path);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const auto* data = reinterpret_cast<const std::byte*>(text.data());
  const std::span<const std::byte> bytes(data, text.size());
  if (bytes.size() < kSlotsHeader || std::memcmp(bytes.data(), kSlotsMagic, 8) != 0) {
    return Status::Corruption("collection: " + path + " is not a slots file");
  }
  const std::uint64_t n = GetU64(bytes.data() + 8);
  if (bytes.size() != kSlotsHeader + n * 8) {
    return Status::Corruption("collection: " + path + " is truncated (" +
                              std::to_string(bytes.size()) + " bytes for " + std::to_string(n) +
                              " ids)");
  }
  if (GetU64(bytes.data() + 16) !=
      Checksum64(bytes.data() + kSlotsHeader, bytes.size() - kSlotsHeader)) {
    return Status::Corruption("collection: checksum mismatch in " + path);
  }
  std::vector<VectorId> ids(n);
  for (std::uint64_t i = 0; i < n; ++i) ids[i] = GetU64(bytes.data() + kSlotsHeader + i * 8);
  return ids;
}

Status IndexVersion::Init(std::vector<VectorId> ids, std::uint64_t capacity) {
  if (index_->num_vectors() != ids.size()) {
    return Status::Corruption("collection: index " + dir_ + " has " +
                              std::to_string(index_->num_vectors()) + " vectors but " +
                              kSlotsFile + " " + std::to_string(ids.size()));
  }
  base_size_ = ids.size();
  slot_ids_ = std::move(ids);
  // Ids written in increasing order (a running counter, the usual case) keep
  // their slots in id order: slot_ids_ is then its own index, and the id ->
  // slot table (16 B a vector, half of the collection's per-vector RAM
  // beside the codes) is not built.
  if (std::adjacent_find(slot_ids_.begin(), slot_ids_.end(),
                         std::greater_equal<VectorId>()) == slot_ids_.end()) {
    ids_sorted_ = true;
  } else {
    STRATA_RETURN_IF_ERROR(BuildIdTable());
  }
  capacity = std::max<std::uint64_t>(capacity, base_size_);
  slot_ids_.resize(capacity, kInvalidVectorId);
  dead_.reset(new std::atomic<std::uint64_t>[capacity]);
  for (std::size_t i = 0; i < capacity; ++i) dead_[i].store(kNeverDead, std::memory_order_relaxed);
  size_.store(base_size_, std::memory_order_release);
  return Status::OK();
}

Result<std::shared_ptr<IndexVersion>> IndexVersion::Load(std::uint64_t number,
                                                         const std::string& dir,
                                                         const OpenOptions& options) {
  std::shared_ptr<IndexVersion> v(new IndexVersion());
  v->number_ = number;
  v->dir_ = dir;
  STRATA_ASSIGN_OR_RETURN(std::vector<VectorId> ids, ReadSlotsFile(dir));
  auto index = Index::Open(dir, options);
  if (!index.ok()) {
    return Status(index.status().code(),
                  "collection: index version " + std::to_string(number) + ": " +
                      std::string(index.status().message()));
  }
  v->owned_index_ = std::move(*index);
  v->index_ = v->owned_index_.get();
  STRATA_RETURN_IF_ERROR(v->Init(std::move(ids), 0));
  return v;
}

Result<std::shared_ptr<IndexVersion>> IndexVersion::LoadInPlace(std::uint64_t number,
                                                                const std::string& dir,
                                                                const OpenOptions& options,
                                                                InPlaceSetup setup) {
  std::shared_ptr<IndexVersion> v(new IndexVersion());
  v->number_ = number;
  v->dir_ = dir;
  STRATA_ASSIGN_OR_RETURN(std::vector<VectorId> ids, ReadSlotsFile(dir));
  const std::string layout = dir + "/decoupled";
  std::error_code ec;
  if (!std::filesystem::exists(layout + "/graph.edges", ec) ||
      !std::filesystem::exists(layout + "/graph.vectors", ec)) {
    if (!setup.appended.empty() || !setup.recovery.moves.empty()) {
      return Status::Corruption("collection: index version " + std::to_string(number) +
                                " has a journal but no decoupled layout");
    }
    std::filesystem::create_directories(layout, ec);
    DecoupledLayoutOptions o;
    o.shuffle = true;  // edge pages by locality: fewer pages per walk (OR 0.22 -> 0.45 at 1M)
    o.threads = setup.threads;
    o.vectors_in_edge_pages = setup.vectors_in_edge_pages;
    auto written = WriteDecoupledLayout(dir, layout, o);
    if (!written.ok()) return written.status().WithContext("collection: writing the decoupled layout");
  }
  const auto base = static_cast<std::uint64_t>(ids.size());
  setup.graph.capacity = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      0xFFFFFFF0u, std::max<std::uint64_t>(setup.graph.capacity,
                                           base + setup.appended.size())));
  setup.graph.search_hides_deleted = false;  // the collection's filter decides what is live
  auto graph = InPlaceGraph::Open(dir, layout, setup.graph, options, &setup.recovery);
  if (!graph.ok()) {
    return Status(graph.status().code(),
                  "collection: index version " + std::to_string(number) + ": " +
                      std::string(graph.status().message()));
  }
  v->graph_ = std::move(*graph);
  v->index_ = &v->graph_->index();
  if (!setup.appended.empty() && setup.first_appended != v->graph_->base_vertices()) {
    return Status::Corruption("collection: index version " + std::to_string(number) +
                              ": the journal appends from vertex " +
                              std::to_string(setup.first_appended) + ", the layout holds " +
                              std::to_string(v->graph_->base_vertices()));
  }
  if (v->graph_->num_rows() != base + setup.appended.size()) {
    return Status::Corruption("collection: index version " + std::to_string(number) +
                              ": the journal appends " + std::to_string(setup.appended.size()) +
                              " rows, the graph holds " +
                              std::to_string(v->graph_->num_rows() - base));
  }
  // Rows and ids are counted the same way (the index's rows, then one per
  // appended vertex).
  STRATA_RETURN_IF_ERROR(v->Init(std::move(ids), v->graph_->base_rows() +
                                                     (v->graph_->capacity() -
                                                      v->graph_->base_vertices())));
  const std::uint64_t capacity = v->slot_ids_.size();
  v->born_.reset(new std::atomic<std::uint64_t>[capacity]);
  for (std::size_t i = 0; i < capacity; ++i) v->born_[i].store(0, std::memory_order_relaxed);
  for (std::size_t i = 0; i < setup.appended.size(); ++i) {
    const std::uint64_t row = base + i;
    v->StageRow(row, setup.appended[i].first, setup.appended[i].second, kNeverDead);
    v->PublishRow(row);
  }
  return v;
}

void IndexVersion::StageRow(std::uint64_t row, VectorId id, std::uint64_t born,
                            std::uint64_t dead) {
  slot_ids_[row] = id;
  born_[row].store(born, std::memory_order_relaxed);
  dead_[row].store(kNeverDead, std::memory_order_relaxed);
  if (dead != kNeverDead) MarkDead(static_cast<std::uint32_t>(row), dead);
}

void IndexVersion::EnqueueRepair(std::uint64_t row) {
  if (!graph_) return;
  std::lock_guard<std::mutex> lock(repairs_mu_);
  repairs_.push_back(row);
}

std::optional<std::uint64_t> IndexVersion::TakeRepair() {
  std::lock_guard<std::mutex> lock(repairs_mu_);
  if (repairs_.empty()) return std::nullopt;
  const std::uint64_t row = repairs_.front();
  repairs_.pop_front();
  return row;
}

std::size_t IndexVersion::RepairsQueued() const {
  std::lock_guard<std::mutex> lock(repairs_mu_);
  return repairs_.size();
}

void IndexVersion::PublishRow(std::uint64_t row) {
  const VectorId id = slot_ids_[row];
  // The id's newest copy is the one born last, not the last row: applier
  // threads may publish a write after the one that replaced it (which
  // killed it: it is published dead).
  const std::optional<std::uint32_t> other = SlotOf(id);
  const bool newest = !other || born(*other) <= born(row);
  if (newest) {
    std::unique_lock<std::shared_mutex> lock(appended_mu_);
    appended_by_id_[id] = static_cast<std::uint32_t>(row);
  }
  size_.store(row + 1, std::memory_order_release);
  // The older copy is superseded (replaced, or deleted and written again):
  // never returned again, whatever the snapshot's tombstones say.
  const std::uint64_t older = newest ? (other ? *other : kNoSlot) : row;
  if (older != kNoSlot && LiveAt(older, kNeverDead - 1)) {
    MarkDead(static_cast<std::uint32_t>(older), 0);
  }
}

Status IndexVersion::BuildIdTable() {
  by_id_.resize(base_size_);
  for (std::size_t i = 0; i < base_size_; ++i) {
    by_id_[i] = {slot_ids_[i], static_cast<std::uint32_t>(i)};
  }
  std::sort(by_id_.begin(), by_id_.end());
  for (std::size_t i = 1; i < by_id_.size(); ++i) {
    if (by_id_[i].first == by_id_[i - 1].first) {
      return Status::Corruption("collection: id " + std::to_string(by_id_[i].first) +
                                " appears twice in " + dir_ + "/" + kSlotsFile);
    }
  }
  return Status::OK();
}

IndexVersion::~IndexVersion() {
  pool_.clear();
  index_ = nullptr;
  graph_.reset();
  owned_index_.reset();
  if (obsolete_.load()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);  // best effort: open() removes leftovers too
  }
}

void IndexVersion::AppendSlotsOf(std::span<const VectorId> ids,
                                 std::vector<std::uint64_t>* slots) const {
  constexpr std::size_t kFew = 64;
  if (ids.size() < kFew) {
    for (VectorId id : ids) {
      if (auto slot = SlotOf(id)) slots->push_back(*slot);
    }
    return;
  }
  // Candidates from a payload index come sorted already.
  std::vector<VectorId> copy;
  std::span<const VectorId> sorted = ids;
  if (!std::is_sorted(ids.begin(), ids.end())) {
    copy.assign(ids.begin(), ids.end());
    std::sort(copy.begin(), copy.end());
    sorted = copy;
  }
  if (in_place()) {
    // Appended rows shadow the base's: one lookup each.
    for (VectorId id : sorted) {
      if (auto slot = SlotOf(id)) slots->push_back(*slot);
    }
    return;
  }
  const auto base_end = slot_ids_.begin() + static_cast<std::ptrdiff_t>(base_size_);
  if (ids_sorted_) {
    ForEachFoundAscending(
        slot_ids_.begin(), base_end, sorted, [](VectorId e) { return e; },
        [&](auto at) { slots->push_back(static_cast<std::uint64_t>(at - slot_ids_.begin())); });
  } else {
    ForEachFoundAscending(
        by_id_.begin(), by_id_.end(), sorted, [](const auto& e) { return e.first; },
        [&](auto at) { slots->push_back(static_cast<std::uint64_t>(at->second)); });
  }
}

std::optional<std::uint32_t> IndexVersion::SlotOf(VectorId id) const {
  if (in_place()) {
    std::shared_lock<std::shared_mutex> lock(appended_mu_);
    if (auto it = appended_by_id_.find(id); it != appended_by_id_.end()) return it->second;
  }
  if (ids_sorted_) {
    const auto base_end = slot_ids_.begin() + static_cast<std::ptrdiff_t>(base_size_);
    auto at = std::lower_bound(slot_ids_.begin(), base_end, id);
    if (at == base_end || *at != id) return std::nullopt;
    return static_cast<std::uint32_t>(at - slot_ids_.begin());
  }
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::make_pair(id, std::uint32_t{0}));
  if (it == by_id_.end() || it->first != id) return std::nullopt;
  return it->second;
}

void IndexVersion::MarkDead(std::uint32_t slot, std::uint64_t seq) {
  if (dead_[slot].load(std::memory_order_relaxed) == kNeverDead) {
    dead_count_.fetch_add(1, std::memory_order_relaxed);
    // Inserts stop linking to it. Only rows the graph has published: a
    // staged row is marked by its StageRow.
    if (graph_ && slot < graph_->num_rows()) (void)graph_->Delete(slot);
  }
  dead_[slot].store(seq, std::memory_order_release);
}

std::size_t IndexVersion::memory_bytes() const {
  std::size_t appended = 0;
  {
    std::shared_lock<std::shared_mutex> lock(appended_mu_);
    appended = appended_by_id_.size() * (sizeof(VectorId) + sizeof(std::uint32_t) + 16);
  }
  return index_->memory_bytes() + slot_ids_.capacity() * sizeof(VectorId) +
         by_id_.capacity() * sizeof(by_id_[0]) + slot_ids_.size() * sizeof(std::uint64_t) +
         (born_ ? slot_ids_.size() * sizeof(std::uint64_t) : 0) + appended;
}

Result<IndexVersion::PooledSearcher> IndexVersion::Acquire(const SearchParams& params) const {
  const std::uint32_t want = std::max(params.beam_width, params.inflight);
  {
    std::lock_guard<std::mutex> lock(pool_mu_);
    for (std::size_t i = 0; i < pool_.size(); ++i) {
      if (pool_[i].max_width >= want) {
        PooledSearcher s = std::move(pool_[i]);
        pool_.erase(pool_.begin() + static_cast<std::ptrdiff_t>(i));
        return s;
      }
    }
  }
  SearchParams max = params;
  max.beam_width = std::max(want, kPoolWidth);
  max.inflight = std::max(want, kPoolWidth);
  STRATA_ASSIGN_OR_RETURN(auto searcher, index_->NewSearcher(max));
  return PooledSearcher{std::move(searcher), std::max(want, kPoolWidth), {}};
}

void IndexVersion::Release(PooledSearcher s) const {
  std::lock_guard<std::mutex> lock(pool_mu_);
  pool_.push_back(std::move(s));
}

}  // namespace strata::collection
