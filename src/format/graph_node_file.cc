#include "format/graph_node_file.h"

#include <cstring>

#include "base/aligned_buffer.h"

namespace strata::format {

Result<std::uint64_t> WriteGraphNodeFile(const std::string& path, const GraphLayout& layout,
                                         const NodeSource& source) {
  FileHeader header;
  header.kind = FileKind::kGraphNodes;
  header.version = kGraphLayoutVersion;
  header.num_sectors = 1 + layout.data_sectors();
  const std::string fields = layout.EncodeFields();
  STRATA_ASSIGN_OR_RETURN(
      SectorFileWriter writer,
      SectorFileWriter::Create(path, header,
                               std::as_bytes(std::span<const char>(fields.data(), fields.size()))));
  const std::span<std::byte, kSector> sector = writer.sector();

  std::vector<std::byte> vec(layout.vector_bytes);
  std::vector<std::byte> record(layout.record_bytes);
  NodeContent content;
  content.vector = vec;
  auto encode = [&](std::uint64_t slot) -> Status {
    content.neighbours.clear();
    content.codes.clear();
    content.empty = false;
    content.external_id = kInvalidVectorId;
    STRATA_RETURN_IF_ERROR(source(slot, &content));
    if (content.empty) return EncodeEmptyRecord(layout, record);
    return EncodeRecord(layout, vec, content.neighbours, record, content.external_id,
                        content.codes);
  };
  if (layout.records_per_sector > 0) {
    for (std::uint64_t s = 0; s < layout.data_sectors(); ++s) {
      for (std::uint32_t slot = 0; slot < layout.records_per_sector; ++slot) {
        const std::uint64_t node = s * layout.records_per_sector + slot;
        if (node >= layout.num_slots) break;
        STRATA_RETURN_IF_ERROR(encode(node));
        std::memcpy(sector.data() + slot * layout.record_bytes, record.data(), record.size());
      }
      STRATA_RETURN_IF_ERROR(writer.AppendSector());
    }
  } else {
    for (std::uint64_t node = 0; node < layout.num_slots; ++node) {
      STRATA_RETURN_IF_ERROR(encode(node));
      for (std::uint32_t s = 0; s < layout.sectors_per_record; ++s) {
        const std::size_t begin = static_cast<std::size_t>(s) * kSectorPayload;
        const std::size_t n = std::min<std::size_t>(kSectorPayload, record.size() - begin);
        std::memcpy(sector.data(), record.data() + begin, n);
        STRATA_RETURN_IF_ERROR(writer.AppendSector());  // sectors follow slot order
      }
    }
  }
  return writer.Commit();
}

Result<GraphNodeFile> GraphNodeFile::Open(const std::string& path) {
  GraphNodeFile f;
  STRATA_ASSIGN_OR_RETURN(f.file_, DirectFile::Open(path));
  FileHeader header;
  std::string fields;
  std::uint64_t size = 0;
  STRATA_RETURN_IF_ERROR(ReadHeaderSector(f.file_, FileKind::kGraphNodes, kGraphLayoutVersion,
                                          path, &header, &fields, &size));
  STRATA_ASSIGN_OR_RETURN(f.layout_, GraphLayout::DecodeFields(fields, path));
  if (header.num_sectors != 1 + f.layout_.data_sectors() || size != header.num_sectors * kSector) {
    return Status::Corruption(path + ": file size " + std::to_string(size) +
                              " does not match its header (" +
                              std::to_string(header.num_sectors) + " sectors)");
  }
  return f;
}

Status GraphNodeFile::Verify(std::uint64_t first, std::uint32_t count,
                             std::span<const std::byte> buffer) const {
  for (std::uint32_t s = 0; s < count; ++s) {
    STRATA_RETURN_IF_ERROR(VerifySector(
        std::span<const std::byte, kSector>(buffer.data() + s * kSector, kSector),
        FileKind::kGraphNodes, first + s, path()));
  }
  return Status::OK();
}

Status GraphNodeFile::Decode(std::uint64_t slot, const RecordLocation& loc,
                             std::span<const std::byte> buffer, std::vector<std::byte>* scratch,
                             NodeRecordView* out) const {
  STRATA_RETURN_IF_ERROR(Verify(loc.sector, loc.sectors, buffer));
  Status st = DecodeRecord(layout_, slot, loc, buffer, scratch, out);
  if (!st.ok()) return st.WithContext(path());
  return Status::OK();
}

Status GraphNodeFile::ReadSectors(std::uint64_t first, std::uint64_t count,
                                  std::span<std::byte> buffer) const {
  STRATA_RETURN_IF_ERROR(file_.ReadAt(first * kSector, buffer.first(count * kSector)));
  for (std::uint64_t s = 0; s < count; ++s) {
    STRATA_RETURN_IF_ERROR(VerifySector(
        std::span<const std::byte, kSector>(buffer.data() + s * kSector, kSector),
        FileKind::kGraphNodes, first + s, path()));
  }
  return Status::OK();
}

}  // namespace strata::format
