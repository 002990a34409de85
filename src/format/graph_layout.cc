#include "format/graph_layout.h"

#include <algorithm>
#include <cstring>

#include "format/le_coding.h"

namespace strata::format {

Result<GraphLayout> GraphLayout::Make(std::uint32_t dim, ElementType type,
                                      std::uint32_t max_degree, std::uint64_t num_nodes,
                                      std::uint32_t inline_bytes) {
  if (dim == 0 || dim > 65536) return Status::InvalidArgument("graph layout: bad dimension");
  if (max_degree == 0 || max_degree > 4096) {
    return Status::InvalidArgument("graph layout: max degree must be in 1..4096");
  }
  if (num_nodes == 0) return Status::InvalidArgument("graph layout: no nodes");
  GraphLayout l;
  l.dim = dim;
  l.element_type = type;
  l.max_degree = max_degree;
  l.num_nodes = num_nodes;
  l.inline_bytes = inline_bytes;
  // 4-byte ids while every id and the 0xFFFFFFFF sentinel fit; 8 beyond.
  l.id_bytes = num_nodes < 0xFFFFFFFFull ? 4 : 8;
  l.vector_bytes = static_cast<std::uint32_t>(dim * ElementSize(type));
  l.record_bytes = l.vector_bytes + 4 + max_degree * l.id_bytes + inline_bytes;
  if (l.record_bytes <= kSectorPayload) {
    l.records_per_sector = static_cast<std::uint32_t>(kSectorPayload / l.record_bytes);
    l.sectors_per_record = 1;
  } else {
    l.records_per_sector = 0;
    l.sectors_per_record =
        static_cast<std::uint32_t>((l.record_bytes + kSectorPayload - 1) / kSectorPayload);
  }
  return l;
}

std::uint64_t GraphLayout::data_sectors() const {
  if (records_per_sector > 0) return (num_nodes + records_per_sector - 1) / records_per_sector;
  return num_nodes * sectors_per_record;
}

RecordLocation GraphLayout::Locate(std::uint64_t node) const {
  RecordLocation loc;
  if (records_per_sector > 0) {
    loc.sector = 1 + node / records_per_sector;
    loc.offset = static_cast<std::uint32_t>((node % records_per_sector) * record_bytes);
    loc.sectors = 1;
  } else {
    loc.sector = 1 + node * sectors_per_record;
    loc.offset = 0;
    loc.sectors = sectors_per_record;
  }
  return loc;
}

std::string GraphLayout::EncodeFields() const {
  std::string s(48, '\0');
  auto* p = reinterpret_cast<std::byte*>(s.data());
  PutU32(p + 0, dim);
  PutU32(p + 4, static_cast<std::uint32_t>(element_type));
  PutU32(p + 8, max_degree);
  PutU32(p + 12, id_bytes);
  PutU32(p + 16, inline_bytes);
  PutU32(p + 20, record_bytes);
  PutU64(p + 24, num_nodes);
  PutU32(p + 32, records_per_sector);
  PutU32(p + 36, sectors_per_record);
  PutU32(p + 40, vector_bytes);
  return s;
}

Result<GraphLayout> GraphLayout::DecodeFields(const std::string& fields, const std::string& path) {
  if (fields.size() < 48) return Status::Corruption(path + ": graph header fields truncated");
  const auto* p = reinterpret_cast<const std::byte*>(fields.data());
  const std::uint32_t type = GetU32(p + 4);
  if (type > static_cast<std::uint32_t>(ElementType::kInt8)) {
    return Status::Corruption(path + ": unknown element type " + std::to_string(type));
  }
  auto made = Make(GetU32(p + 0), static_cast<ElementType>(type), GetU32(p + 8), GetU64(p + 24),
                   GetU32(p + 16));
  if (!made.ok()) return Status::Corruption(path + ": " + made.status().message());
  const GraphLayout& l = *made;
  if (l.id_bytes != GetU32(p + 12) || l.record_bytes != GetU32(p + 20) ||
      l.records_per_sector != GetU32(p + 32) || l.sectors_per_record != GetU32(p + 36) ||
      l.vector_bytes != GetU32(p + 40)) {
    return Status::Corruption(path + ": graph header fields are inconsistent");
  }
  return made;
}

VectorId NodeRecordView::neighbour(std::uint32_t i) const {
  return GetId(neighbours + static_cast<std::size_t>(i) * id_bytes, id_bytes);
}

Status DecodeRecord(const GraphLayout& layout, const RecordLocation& loc,
                    std::span<const std::byte> sectors, std::vector<std::byte>* scratch,
                    NodeRecordView* out) {
  const std::byte* rec;
  if (loc.sectors == 1) {
    rec = sectors.data() + loc.offset;
  } else {
    // Gather the payload parts of consecutive sectors into one contiguous record.
    scratch->resize(static_cast<std::size_t>(loc.sectors) * kSectorPayload);
    for (std::uint32_t s = 0; s < loc.sectors; ++s) {
      std::memcpy(scratch->data() + s * kSectorPayload, sectors.data() + s * kSector,
                  kSectorPayload);
    }
    rec = scratch->data();
  }
  out->vector = std::span<const std::byte>(rec, layout.vector_bytes);
  out->degree = GetU32(rec + layout.vector_bytes);
  out->neighbours = rec + layout.vector_bytes + 4;
  out->id_bytes = layout.id_bytes;
  if (out->degree > layout.max_degree) {
    return Status::Corruption("node record degree " + std::to_string(out->degree) +
                              " exceeds the maximum " + std::to_string(layout.max_degree));
  }
  return Status::OK();
}

Status EncodeRecord(const GraphLayout& layout, std::span<const std::byte> vector,
                    std::span<const VectorId> neighbours, std::span<std::byte> out) {
  if (vector.size() != layout.vector_bytes || out.size() < layout.record_bytes) {
    return Status::InvalidArgument("node record: buffer sizes do not match the layout");
  }
  if (neighbours.size() > layout.max_degree) {
    return Status::InvalidArgument("node record: " + std::to_string(neighbours.size()) +
                                   " neighbours exceed the maximum degree " +
                                   std::to_string(layout.max_degree));
  }
  std::memset(out.data(), 0, layout.record_bytes);
  std::memcpy(out.data(), vector.data(), vector.size());
  PutU32(out.data() + layout.vector_bytes, static_cast<std::uint32_t>(neighbours.size()));
  std::byte* ids = out.data() + layout.vector_bytes + 4;
  for (std::size_t i = 0; i < neighbours.size(); ++i) {
    if (neighbours[i] >= layout.num_nodes) {
      return Status::InvalidArgument("node record: neighbour id " +
                                     std::to_string(neighbours[i]) + " out of range");
    }
    PutId(ids + i * layout.id_bytes, neighbours[i], layout.id_bytes);
  }
  return Status::OK();
}

}  // namespace strata::format
