#include "format/edge_page.h"

#include <cstring>
#include <string>

#include "format/le_coding.h"

namespace strata::format {
namespace {

std::uint16_t GetU16(const std::byte* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
void PutU16(std::byte* p, std::uint16_t v) { std::memcpy(p, &v, 2); }

// Directory entry `slot`: vertex u32, offset u16, degree u16.
std::size_t EntryOffset(std::uint32_t slot) {
  return kEdgePageHeader + static_cast<std::size_t>(slot) * kEdgeSlotHeader;
}

}  // namespace

Result<EdgePageGeometry> EdgePageGeometry::ForCapacity(std::uint32_t capacity,
                                                       std::uint32_t vector_bytes) {
  if (capacity == 0 || capacity > 0xFFFF) {
    return Status::InvalidArgument("edge page: capacity must be in 1..65535 ids, got " +
                                   std::to_string(capacity));
  }
  EdgePageGeometry g;
  g.capacity = static_cast<std::uint16_t>(capacity);
  const std::uint64_t full = kEdgeSlotHeader + 4ull * capacity + vector_bytes;
  if (vector_bytes > kSectorPayload || full > kEdgePageRoom) {
    return Status::InvalidArgument("edge page: a list of " + std::to_string(capacity) +
                                   " ids" +
                                   (vector_bytes ? " and a vector of " +
                                                       std::to_string(vector_bytes) + " bytes"
                                                 : std::string()) +
                                   " does not fit a page");
  }
  g.vector_bytes = static_cast<std::uint16_t>(vector_bytes);
  g.slots_per_page = static_cast<std::uint32_t>(kEdgePageRoom / g.ListBytes(0));
  return g;
}

void EdgePageWriter::Clear(std::uint32_t epoch) {
  std::memset(page_.data(), 0, page_.size());
  PutU32(page_.data(), kEdgePageMagic);
  PutU16(page_.data() + 4, kEdgePageVersion);
  PutU16(page_.data() + 6, g_.capacity);
  PutU16(page_.data() + 8, 0);
  PutU16(page_.data() + 10, g_.vector_bytes);
  PutU32(page_.data() + 12, epoch);
  slots_ = 0;
  low_ = kSectorPayload;
}

Status EdgePageWriter::Put(std::uint32_t slot, std::uint32_t vertex,
                           std::span<const std::uint32_t> ids, std::span<const std::byte> vector) {
  if (vertex == kNoVertex) return Status::InvalidArgument("edge page: no vertex id");
  if (ids.size() > g_.capacity) {
    return Status::InvalidArgument("edge page: " + std::to_string(ids.size()) +
                                   " edges exceed the capacity " + std::to_string(g_.capacity));
  }
  if (vector.size() != g_.vector_bytes) {
    return Status::InvalidArgument("edge page: a vector of " + std::to_string(vector.size()) +
                                   " bytes in a slot for " + std::to_string(g_.vector_bytes));
  }
  const std::size_t new_slots = slot >= slots_ ? slot + 1 - slots_ : 0;
  const std::size_t list_bytes = g_.ListBytes(ids.size()) - kEdgeSlotHeader;
  if (new_slots * kEdgeSlotHeader + list_bytes > Room()) {
    return Status::OutOfRange("edge page: a list of " + std::to_string(ids.size()) +
                              " ids in slot " + std::to_string(slot) + " does not fit the " +
                              std::to_string(Room()) + " bytes left");
  }
  for (; slots_ <= slot; ++slots_) PutU32(page_.data() + EntryOffset(slots_), kNoVertex);
  PutU16(page_.data() + 8, static_cast<std::uint16_t>(slots_));
  low_ -= list_bytes;
  std::byte* entry = page_.data() + EntryOffset(slot);
  PutU32(entry, vertex);
  PutU16(entry + 4, static_cast<std::uint16_t>(low_));
  PutU16(entry + 6, static_cast<std::uint16_t>(ids.size()));
  std::byte* list = page_.data() + low_;
  if (!ids.empty()) std::memcpy(list, ids.data(), ids.size() * 4);  // data() may be null
  const std::size_t stored = list_bytes - g_.vector_bytes;  // fixed-size records: zeros past the list
  std::memset(list + ids.size() * 4, 0, stored - ids.size() * 4);
  if (!vector.empty()) std::memcpy(list + stored, vector.data(), vector.size());
  return Status::OK();
}

Result<std::uint16_t> EdgePageWriter::Append(std::uint32_t vertex,
                                             std::span<const std::uint32_t> ids,
                                             std::span<const std::byte> vector) {
  const std::uint32_t slot = slots_;
  STRATA_RETURN_IF_ERROR(Put(slot, vertex, ids, vector));
  return static_cast<std::uint16_t>(slot);
}

Result<EdgePageReader> EdgePageReader::Open(const EdgePageGeometry& g,
                                            std::span<const std::byte, kSectorPayload> payload) {
  const std::byte* p = payload.data();
  if (GetU32(p) != kEdgePageMagic) return Status::Corruption("edge page: bad magic");
  if (GetU16(p + 4) != kEdgePageVersion) {
    return Status::Corruption("edge page: unknown layout version " + std::to_string(GetU16(p + 4)));
  }
  if (GetU16(p + 6) != g.capacity) {
    return Status::Corruption("edge page: capacity " + std::to_string(GetU16(p + 6)) +
                              ", the file's is " + std::to_string(g.capacity));
  }
  if (GetU16(p + 10) != g.vector_bytes) {
    return Status::Corruption("edge page: " + std::to_string(GetU16(p + 10)) +
                              " vector bytes a list, the file's are " +
                              std::to_string(g.vector_bytes));
  }
  EdgePageReader r;
  r.g_ = g;
  r.page_ = p;
  r.slots_ = GetU16(p + 8);
  r.epoch_ = GetU32(p + 12);
  if (EntryOffset(r.slots_) > kSectorPayload) {
    return Status::Corruption("edge page: a directory of " + std::to_string(r.slots_) +
                              " slots does not fit the page");
  }
  return r;
}

std::uint32_t EdgePageReader::vertex(std::uint32_t slot) const {
  return slot < slots_ ? GetU32(page_ + EntryOffset(slot)) : kNoVertex;
}

Result<std::span<const std::byte>> EdgePageReader::Edges(std::uint32_t slot, std::uint32_t vertex,
                                                         std::uint16_t* degree) const {
  const std::uint32_t owner = this->vertex(slot);
  if (owner != vertex || vertex == kNoVertex) {
    return Status::Corruption("edge page: slot " + std::to_string(slot) + " holds vertex " +
                              (owner == kNoVertex ? std::string("none") : std::to_string(owner)) +
                              ", not " + std::to_string(vertex));
  }
  const std::byte* entry = page_ + EntryOffset(slot);
  const std::size_t offset = GetU16(entry + 4);
  const std::uint16_t d = GetU16(entry + 6);
  if (d > g_.capacity) {
    return Status::Corruption("edge page: degree " + std::to_string(d) + " exceeds the capacity " +
                              std::to_string(g_.capacity));
  }
  if (offset < EntryOffset(slots_) ||
      offset + g_.ListBytes(d) - kEdgeSlotHeader > kSectorPayload) {
    return Status::Corruption("edge page: the list of slot " + std::to_string(slot) + " at " +
                              std::to_string(offset) + " lies outside the page's lists");
  }
  *degree = d;
  return std::span<const std::byte>(page_ + offset, std::size_t{d} * 4);
}

std::span<const std::byte> EdgePageReader::Vector(std::uint32_t slot) const {
  const std::size_t offset = GetU16(page_ + EntryOffset(slot) + 4);
  return {page_ + offset + 4 * std::size_t{g_.capacity}, g_.vector_bytes};  // fixed-size records
}

std::uint32_t EdgePageReader::Id(std::span<const std::byte> edges, std::size_t i) {
  return GetU32(edges.data() + 4 * i);
}

Status EdgePageReader::ReadList(std::uint32_t slot, std::uint32_t vertex,
                                std::vector<std::uint32_t>* ids,
                                std::vector<std::byte>* vector) const {
  std::uint16_t degree = 0;
  STRATA_ASSIGN_OR_RETURN(std::span<const std::byte> edges, Edges(slot, vertex, &degree));
  ids->resize(degree);
  if (degree > 0) std::memcpy(ids->data(), edges.data(), std::size_t{degree} * 4);
  if (vector != nullptr) {
    const std::span<const std::byte> x = Vector(slot);
    vector->assign(x.begin(), x.end());
  }
  return Status::OK();
}

}  // namespace strata::format
