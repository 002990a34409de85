#include "format/vector_file.h"

#include "format/le_coding.h"

namespace strata::format {
namespace {

constexpr std::size_t kFieldsSize = 16;

}  // namespace

Result<VectorFileLayout> VectorFileLayout::Make(std::uint32_t dim, ElementType type,
                                                std::uint64_t num_slots) {
  if (dim == 0) return Status::InvalidArgument("vector file: dim must be > 0");
  VectorFileLayout l;
  l.dim = dim;
  l.element_type = type;
  l.num_slots = num_slots;
  const std::uint64_t bytes = std::uint64_t{dim} * ElementSize(type);
  if (bytes > kSectorPayload) {
    return Status::InvalidArgument("vector file: a vector of " + std::to_string(bytes) +
                                   " bytes does not fit a sector");
  }
  l.vector_bytes = static_cast<std::uint32_t>(bytes);
  l.vectors_per_sector = static_cast<std::uint32_t>(kSectorPayload / bytes);
  return l;
}

Result<std::uint64_t> WriteVectorFile(const std::string& path, const VectorFileLayout& layout,
                                      const VectorSource& source) {
  STRATA_ASSIGN_OR_RETURN(VectorFileLayout l,
                          VectorFileLayout::Make(layout.dim, layout.element_type, layout.num_slots));
  FileHeader header;
  header.kind = FileKind::kVectors;
  header.version = kVectorFileVersion;
  header.num_sectors = 1 + l.data_sectors();
  std::byte fields[kFieldsSize] = {};
  PutU32(fields, l.dim);
  fields[4] = static_cast<std::byte>(l.element_type);
  PutU64(fields + 8, l.num_slots);
  STRATA_ASSIGN_OR_RETURN(SectorFileWriter writer, SectorFileWriter::Create(path, header, fields));
  for (std::uint64_t s = 0; s < l.data_sectors(); ++s) {
    for (std::uint32_t i = 0; i < l.vectors_per_sector; ++i) {
      const std::uint64_t slot = s * l.vectors_per_sector + i;
      if (slot >= l.num_slots) break;
      STRATA_RETURN_IF_ERROR(source(slot, writer.sector().subspan(l.OffsetOf(slot), l.vector_bytes)));
    }
    STRATA_RETURN_IF_ERROR(writer.AppendSector());
  }
  return writer.Commit();
}

Result<VectorFile> VectorFile::Open(const std::string& path, bool grown) {
  VectorFile f;
  FileHeader header;
  std::string fields;
  std::uint64_t size = 0;
  STRATA_RETURN_IF_ERROR(OpenFixedSectorFile(path, FileKind::kVectors, kVectorFileVersion,
                                             kFieldsSize, &f.file_, &header, &fields, grown,
                                             &size));
  const auto* p = reinterpret_cast<const std::byte*>(fields.data());
  const auto type = static_cast<ElementType>(std::to_integer<std::uint8_t>(p[4]));
  if (ElementTypeName(type) == "unknown") {
    return Status::Corruption(path + ": unknown element type " +
                              std::to_string(std::to_integer<int>(p[4])));
  }
  auto layout = VectorFileLayout::Make(GetU32(p), type, GetU64(p + 8));
  if (!layout.ok()) return Status::Corruption(path + ": " + layout.status().message());
  f.layout_ = *layout;
  if (header.num_sectors != 1 + f.layout_.data_sectors()) {
    return Status::Corruption(path + ": " + std::to_string(header.num_sectors) +
                              " sectors for " + std::to_string(f.layout_.num_slots) + " slots");
  }
  f.readable_slots_ = grown ? (size / kSector - 1) * f.layout_.vectors_per_sector
                            : f.layout_.num_slots;
  return f;
}

Result<std::span<const std::byte>> VectorFile::Slot(std::uint64_t slot,
                                                    std::span<const std::byte, kSector> sector) const {
  if (slot >= readable_slots_) {
    return Status::InvalidArgument(path() + ": no vector slot " + std::to_string(slot));
  }
  STRATA_RETURN_IF_ERROR(VerifySector(sector, FileKind::kVectors, layout_.SectorOf(slot), path()));
  return sector.subspan(layout_.OffsetOf(slot), layout_.vector_bytes);
}

Result<std::span<const std::byte>> VectorFile::ReadSlot(std::uint64_t slot,
                                                        std::span<std::byte, kSector> sector) const {
  if (slot >= readable_slots_) {
    return Status::InvalidArgument(path() + ": no vector slot " + std::to_string(slot));
  }
  STRATA_RETURN_IF_ERROR(file_.ReadAt(layout_.SectorOf(slot) * kSector, sector));
  return Slot(slot, sector);
}

}  // namespace strata::format
