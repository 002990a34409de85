#include "format/graph_layout.h"

#include <algorithm>
#include <cstring>

#include "format/le_coding.h"

namespace strata::format {
namespace {

constexpr std::size_t kFieldsBytes = 64;
constexpr std::uint32_t kFlagExternalIds = 1;

VectorId EmptyMarker(std::uint32_t id_bytes) {
  return id_bytes == 4 ? 0xFFFFFFFFull : kInvalidVectorId;
}

}  // namespace

Result<GraphLayout> GraphLayout::Make(const GraphLayoutSpec& spec) {
  if (spec.dim == 0 || spec.dim > 65536) return Status::InvalidArgument("graph layout: bad dimension");
  if (spec.max_degree == 0 || spec.max_degree > 4096) {
    return Status::InvalidArgument("graph layout: max degree must be in 1..4096");
  }
  if (spec.num_nodes == 0) return Status::InvalidArgument("graph layout: no nodes");
  const std::uint64_t slots = spec.num_slots ? spec.num_slots : spec.num_nodes;
  if (slots < spec.num_nodes) return Status::InvalidArgument("graph layout: fewer slots than nodes");
  if (slots > spec.num_nodes && !spec.external_ids) {
    return Status::InvalidArgument("graph layout: empty slots need external ids");
  }
  if (spec.code_bytes > 4096) return Status::InvalidArgument("graph layout: code size above 4096");
  GraphLayout l;
  l.dim = spec.dim;
  l.element_type = spec.element_type;
  l.max_degree = spec.max_degree;
  l.num_nodes = spec.num_nodes;
  l.num_slots = slots;
  l.external_ids = spec.external_ids;
  l.code_bytes = spec.code_bytes;
  // 4-byte ids while every id and the 0xFFFFFFFF sentinel fit; 8 beyond.
  l.id_bytes = slots < 0xFFFFFFFFull ? 4 : 8;
  l.vector_bytes = static_cast<std::uint32_t>(spec.dim * ElementSize(spec.element_type));
  const std::uint64_t record = std::uint64_t{l.vector_bytes} + 4 +
                               std::uint64_t{spec.max_degree} * l.id_bytes +
                               (spec.external_ids ? l.id_bytes : 0) +
                               std::uint64_t{spec.max_degree} * spec.code_bytes;
  if (record > (1u << 30)) return Status::InvalidArgument("graph layout: record too large");
  l.record_bytes = static_cast<std::uint32_t>(record);
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
  if (records_per_sector > 0) return (num_slots + records_per_sector - 1) / records_per_sector;
  return num_slots * sectors_per_record;
}

RecordLocation GraphLayout::Locate(std::uint64_t slot) const {
  RecordLocation loc;
  if (records_per_sector > 0) {
    loc.sector = 1 + slot / records_per_sector;
    loc.offset = static_cast<std::uint32_t>((slot % records_per_sector) * record_bytes);
    loc.sectors = 1;
  } else {
    loc.sector = 1 + slot * sectors_per_record;
    loc.offset = 0;
    loc.sectors = sectors_per_record;
  }
  return loc;
}

std::string GraphLayout::EncodeFields() const {
  std::string s(kFieldsBytes, '\0');
  auto* p = reinterpret_cast<std::byte*>(s.data());
  PutU32(p + 0, dim);
  PutU32(p + 4, static_cast<std::uint32_t>(element_type));
  PutU32(p + 8, max_degree);
  PutU32(p + 12, id_bytes);
  PutU32(p + 16, code_bytes);
  PutU32(p + 20, record_bytes);
  PutU64(p + 24, num_nodes);
  PutU32(p + 32, records_per_sector);
  PutU32(p + 36, sectors_per_record);
  PutU32(p + 40, vector_bytes);
  PutU32(p + 44, external_ids ? kFlagExternalIds : 0);
  PutU64(p + 48, num_slots);
  return s;
}

Result<GraphLayout> GraphLayout::DecodeFields(const std::string& fields, const std::string& path) {
  if (fields.size() < kFieldsBytes) return Status::Corruption(path + ": graph header fields truncated");
  const auto* p = reinterpret_cast<const std::byte*>(fields.data());
  const std::uint32_t type = GetU32(p + 4);
  if (type > static_cast<std::uint32_t>(ElementType::kInt8)) {
    return Status::Corruption(path + ": unknown element type " + std::to_string(type));
  }
  const std::uint32_t flags = GetU32(p + 44);
  if ((flags & ~kFlagExternalIds) != 0) {
    return Status::Corruption(path + ": unknown graph layout flags " + std::to_string(flags));
  }
  GraphLayoutSpec spec;
  spec.dim = GetU32(p + 0);
  spec.element_type = static_cast<ElementType>(type);
  spec.max_degree = GetU32(p + 8);
  spec.num_nodes = GetU64(p + 24);
  spec.num_slots = GetU64(p + 48);
  spec.external_ids = (flags & kFlagExternalIds) != 0;
  spec.code_bytes = GetU32(p + 16);
  auto made = Make(spec);
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

Status DecodeContiguousRecord(const GraphLayout& layout, std::uint64_t slot,
                              const std::byte* rec, NodeRecordView* out) {
  out->vector = std::span<const std::byte>(rec, layout.vector_bytes);
  out->degree = GetU32(rec + layout.vector_bytes);
  out->neighbours = rec + layout.vector_bytes + 4;
  out->id_bytes = layout.id_bytes;
  const std::byte* tail =
      out->neighbours + static_cast<std::size_t>(layout.max_degree) * layout.id_bytes;
  if (layout.external_ids) {
    const VectorId ext = GetId(tail, layout.id_bytes);
    tail += layout.id_bytes;
    if (ext == EmptyMarker(layout.id_bytes)) {
      out->external_id = kInvalidVectorId;
    } else if (ext >= layout.num_nodes) {
      return Status::Corruption("node record of slot " + std::to_string(slot) +
                                " holds external id " + std::to_string(ext) + " out of range");
    } else {
      out->external_id = ext;
    }
  } else {
    out->external_id = slot;
  }
  out->codes = layout.code_bytes ? reinterpret_cast<const std::uint8_t*>(tail) : nullptr;
  if (out->degree > layout.max_degree) {
    return Status::Corruption("node record degree " + std::to_string(out->degree) +
                              " exceeds the maximum " + std::to_string(layout.max_degree));
  }
  return Status::OK();
}

Status DecodeRecord(const GraphLayout& layout, std::uint64_t slot, const RecordLocation& loc,
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
  return DecodeContiguousRecord(layout, slot, rec, out);
}

Status EncodeRecord(const GraphLayout& layout, std::span<const std::byte> vector,
                    std::span<const VectorId> neighbours, std::span<std::byte> out,
                    VectorId external_id, std::span<const std::uint8_t> codes) {
  if (vector.size() != layout.vector_bytes || out.size() < layout.record_bytes) {
    return Status::InvalidArgument("node record: buffer sizes do not match the layout");
  }
  if (neighbours.size() > layout.max_degree) {
    return Status::InvalidArgument("node record: " + std::to_string(neighbours.size()) +
                                   " neighbours exceed the maximum degree " +
                                   std::to_string(layout.max_degree));
  }
  if (layout.external_ids && external_id >= layout.num_nodes) {
    return Status::InvalidArgument("node record: external id out of range");
  }
  if (codes.size() != neighbours.size() * layout.code_bytes) {
    return Status::InvalidArgument("node record: inline codes do not match the neighbours");
  }
  std::memset(out.data(), 0, layout.record_bytes);
  std::memcpy(out.data(), vector.data(), vector.size());
  PutU32(out.data() + layout.vector_bytes, static_cast<std::uint32_t>(neighbours.size()));
  std::byte* ids = out.data() + layout.vector_bytes + 4;
  for (std::size_t i = 0; i < neighbours.size(); ++i) {
    if (neighbours[i] >= layout.num_slots) {
      return Status::InvalidArgument("node record: neighbour id " +
                                     std::to_string(neighbours[i]) + " out of range");
    }
    PutId(ids + i * layout.id_bytes, neighbours[i], layout.id_bytes);
  }
  std::byte* tail = ids + static_cast<std::size_t>(layout.max_degree) * layout.id_bytes;
  if (layout.external_ids) {
    PutId(tail, external_id, layout.id_bytes);
    tail += layout.id_bytes;
  }
  if (!codes.empty()) std::memcpy(tail, codes.data(), codes.size());
  return Status::OK();
}

Status EncodeEmptyRecord(const GraphLayout& layout, std::span<std::byte> out) {
  if (!layout.external_ids) {
    return Status::InvalidArgument("node record: empty slots need external ids");
  }
  if (out.size() < layout.record_bytes) return Status::InvalidArgument("node record: buffer too small");
  std::memset(out.data(), 0, layout.record_bytes);
  std::byte* ext = out.data() + layout.vector_bytes + 4 +
                   static_cast<std::size_t>(layout.max_degree) * layout.id_bytes;
  PutId(ext, EmptyMarker(layout.id_bytes), layout.id_bytes);
  return Status::OK();
}

}  // namespace strata::format
