#include "collection/index_version.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>

#include "base/checksum.h"
#include "base/sorted_lookup.h"
#include "strata/io.h"

namespace strata::collection {
namespace {

constexpr char kSlotsMagic[8] = {'S', 'T', 'R', 'S', 'L', 'O', 'T', '1'};
constexpr std::size_t kSlotsHeader = 24;
// Searchers are created with at least these widths so the pool can serve
// the usual parameter range with one kind of searcher.
constexpr std::uint32_t kPoolWidth = 64;

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

Result<std::shared_ptr<IndexVersion>> IndexVersion::Load(std::uint64_t number,
                                                         const std::string& dir,
                                                         const OpenOptions& options) {
  std::shared_ptr<IndexVersion> v(new IndexVersion());
  v->number_ = number;
  v->dir_ = dir;
  STRATA_ASSIGN_OR_RETURN(v->slot_ids_, ReadSlotsFile(dir));
  auto index = Index::Open(dir, options);
  if (!index.ok()) {
    return Status(index.status().code(),
                  "collection: index version " + std::to_string(number) + ": " +
                      std::string(index.status().message()));
  }
  v->index_ = std::move(*index);
  if (v->index_->num_vectors() != v->slot_ids_.size()) {
    return Status::Corruption("collection: index " + dir + " has " +
                              std::to_string(v->index_->num_vectors()) + " vectors but " +
                              kSlotsFile + " " + std::to_string(v->slot_ids_.size()));
  }
  // Ids written in increasing order (a running counter, the usual case) keep
  // their slots in id order: slot_ids_ is then its own index, and the id ->
  // slot table (16 B a vector, half of the collection's per-vector RAM
  // beside the codes) is not built.
  if (std::adjacent_find(v->slot_ids_.begin(), v->slot_ids_.end(),
                         std::greater_equal<VectorId>()) == v->slot_ids_.end()) {
    v->ids_sorted_ = true;
  } else {
    STRATA_RETURN_IF_ERROR(v->BuildIdTable());
  }
  v->dead_.reset(new std::atomic<std::uint64_t>[v->slot_ids_.size()]);
  for (std::size_t i = 0; i < v->slot_ids_.size(); ++i) {
    v->dead_[i].store(kNeverDead, std::memory_order_relaxed);
  }
  return v;
}

Status IndexVersion::BuildIdTable() {
  by_id_.resize(slot_ids_.size());
  for (std::size_t i = 0; i < slot_ids_.size(); ++i) {
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
  index_.reset();
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
  if (ids_sorted_) {
    ForEachFoundAscending(
        slot_ids_.begin(), slot_ids_.end(), sorted, [](VectorId e) { return e; },
        [&](auto at) { slots->push_back(static_cast<std::uint64_t>(at - slot_ids_.begin())); });
  } else {
    ForEachFoundAscending(
        by_id_.begin(), by_id_.end(), sorted, [](const auto& e) { return e.first; },
        [&](auto at) { slots->push_back(static_cast<std::uint64_t>(at->second)); });
  }
}

std::optional<std::uint32_t> IndexVersion::SlotOf(VectorId id) const {
  if (ids_sorted_) {
    auto at = std::lower_bound(slot_ids_.begin(), slot_ids_.end(), id);
    if (at == slot_ids_.end() || *at != id) return std::nullopt;
    return static_cast<std::uint32_t>(at - slot_ids_.begin());
  }
  auto it = std::lower_bound(by_id_.begin(), by_id_.end(), std::make_pair(id, std::uint32_t{0}));
  if (it == by_id_.end() || it->first != id) return std::nullopt;
  return it->second;
}

void IndexVersion::MarkDead(std::uint32_t slot, std::uint64_t seq) {
  if (dead_[slot].load(std::memory_order_relaxed) == kNeverDead) {
    dead_count_.fetch_add(1, std::memory_order_relaxed);
  }
  dead_[slot].store(seq, std::memory_order_release);
}

std::size_t IndexVersion::memory_bytes() const {
  return index_->memory_bytes() + slot_ids_.capacity() * sizeof(VectorId) +
         by_id_.capacity() * sizeof(by_id_[0]) + slot_ids_.size() * sizeof(std::uint64_t);
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
