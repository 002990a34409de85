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

std::size_t SlotOffset(const EdgePageGeometry& g, std::uint32_t slot) {
  return kEdgePageHeader + static_cast<std::size_t>(slot) * g.slot_bytes;
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
  g.slot_bytes = static_cast<std::uint32_t>(kEdgeSlotHeader + 4ull * capacity + vector_bytes);
  if (vector_bytes > kSectorPayload || kEdgePageHeader + g.slot_bytes > kSectorPayload) {
    return Status::InvalidArgument("edge page: a list of " + std::to_string(capacity) +
                                   " ids" +
                                   (vector_bytes ? " and a vector of " +
                                                       std::to_string(vector_bytes) + " bytes"
                                                 : std::string()) +
                                   " does not fit a page");
  }
  g.vector_bytes = static_cast<std::uint16_t>(vector_bytes);
  g.slots_per_page = static_cast<std::uint32_t>((kSectorPayload - kEdgePageHeader) / g.slot_bytes);
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
  for (std::uint32_t s = 0; s < g_.slots_per_page; ++s) {
    PutU32(page_.data() + SlotOffset(g_, s), kNoVertex);
  }
}

Status EdgePageWriter::Put(std::uint32_t slot, std::uint32_t vertex,
                           std::span<const std::uint32_t> ids, std::span<const std::byte> vector) {
  if (slot >= g_.slots_per_page) {
    return Status::InvalidArgument("edge page: slot " + std::to_string(slot) + " of " +
                                   std::to_string(g_.slots_per_page));
  }
  if (vertex == kNoVertex) return Status::InvalidArgument("edge page: no vertex id");
  if (ids.size() > g_.capacity) {
    return Status::InvalidArgument("edge page: " + std::to_string(ids.size()) +
                                   " edges exceed the capacity " + std::to_string(g_.capacity));
  }
  if (vector.size() != g_.vector_bytes) {
    return Status::InvalidArgument("edge page: a vector of " + std::to_string(vector.size()) +
                                   " bytes in a slot for " + std::to_string(g_.vector_bytes));
  }
  std::byte* p = page_.data() + SlotOffset(g_, slot);
  if (GetU32(p) == kNoVertex) PutU16(page_.data() + 8, GetU16(page_.data() + 8) + 1);
  PutU32(p, vertex);
  PutU16(p + 4, static_cast<std::uint16_t>(ids.size()));
  PutU16(p + 6, 0);
  if (!ids.empty()) std::memcpy(p + kEdgeSlotHeader, ids.data(), ids.size() * 4);  // data() may be null
  std::memset(p + kEdgeSlotHeader + ids.size() * 4, 0, (g_.capacity - ids.size()) * 4);
  if (!vector.empty()) std::memcpy(p + kEdgeSlotHeader + 4 * g_.capacity, vector.data(), vector.size());
  return Status::OK();
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
                              " vector bytes a slot, the file's are " +
                              std::to_string(g.vector_bytes));
  }
  EdgePageReader r;
  r.g_ = g;
  r.page_ = p;
  r.used_ = GetU16(p + 8);
  r.epoch_ = GetU32(p + 12);
  std::uint32_t owned = 0;
  for (std::uint32_t s = 0; s < g.slots_per_page; ++s) owned += r.vertex(s) != kNoVertex;
  if (owned != r.used_) {
    return Status::Corruption("edge page: " + std::to_string(r.used_) + " slots said used, " +
                              std::to_string(owned) + " owned");
  }
  return r;
}

std::uint32_t EdgePageReader::vertex(std::uint32_t slot) const {
  return slot < g_.slots_per_page ? GetU32(page_ + SlotOffset(g_, slot)) : kNoVertex;
}

Result<std::span<const std::byte>> EdgePageReader::Edges(std::uint32_t slot, std::uint32_t vertex,
                                                         std::uint16_t* degree) const {
  const std::uint32_t owner = this->vertex(slot);
  if (owner != vertex || vertex == kNoVertex) {
    return Status::Corruption("edge page: slot " + std::to_string(slot) + " holds vertex " +
                              (owner == kNoVertex ? std::string("none") : std::to_string(owner)) +
                              ", not " + std::to_string(vertex));
  }
  const std::byte* p = page_ + SlotOffset(g_, slot);
  const std::uint16_t d = GetU16(p + 4);
  if (d > g_.capacity) {
    return Status::Corruption("edge page: degree " + std::to_string(d) + " exceeds the capacity " +
                              std::to_string(g_.capacity));
  }
  *degree = d;
  return std::span<const std::byte>(p + kEdgeSlotHeader, std::size_t{d} * 4);
}

std::span<const std::byte> EdgePageReader::Vector(std::uint32_t slot) const {
  return {page_ + SlotOffset(g_, slot) + kEdgeSlotHeader + 4 * std::size_t{g_.capacity},
          g_.vector_bytes};
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
  for (std::uint16_t k = 0; k < degree; ++k) (*ids)[k] = Id(edges, k);
  if (vector != nullptr) {
    const std::span<const std::byte> x = Vector(slot);
    vector->assign(x.begin(), x.end());
  }
  return Status::OK();
}

}  // namespace strata::format
