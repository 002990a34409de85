#include "format/sector_file.h"

#include <cstring>

#include "base/aligned_buffer.h"
#include "base/checksum.h"
#include "format/le_coding.h"

namespace strata::format {
namespace {

std::uint64_t SectorSeed(FileKind kind, std::uint64_t sector_index) {
  return (static_cast<std::uint64_t>(kind) << 40) ^ sector_index;
}

constexpr std::size_t kChecksumOffset = 32;

}  // namespace

Status EncodeHeaderSector(const FileHeader& header, std::span<const std::byte> fields,
                          std::span<std::byte, kSector> out) {
  if (fields.size() > kMaxHeaderFields) {
    return Status::InvalidArgument("header fields too large: " + std::to_string(fields.size()));
  }
  std::memset(out.data(), 0, kSector);
  std::byte* p = out.data();
  std::memcpy(p, FileHeader::kMagic.data(), 8);
  PutU32(p + 8, static_cast<std::uint32_t>(header.kind));
  PutU32(p + 12, header.version);
  PutU64(p + 16, header.num_sectors);
  PutU32(p + 24, static_cast<std::uint32_t>(fields.size()));
  if (!fields.empty()) std::memcpy(p + kHeaderFixedSize, fields.data(), fields.size());
  // The checksum covers the whole sector with its own slot zeroed.
  PutU64(p + kChecksumOffset, Checksum64(p, kSector, 0x5354524154414831ull));
  return Status::OK();
}

Status DecodeHeaderSector(std::span<const std::byte, kSector> sector, FileKind expected_kind,
                          std::uint32_t max_version, const std::string& path,
                          FileHeader* header, std::string* fields) {
  const std::byte* p = sector.data();
  if (std::memcmp(p, FileHeader::kMagic.data(), 8) != 0) {
    return Status::Corruption(path + ": not a Strata index file (bad magic)");
  }
  alignas(64) std::byte copy[kSector];
  std::memcpy(copy, p, kSector);
  PutU64(copy + kChecksumOffset, 0);
  if (GetU64(p + kChecksumOffset) != Checksum64(copy, kSector, 0x5354524154414831ull)) {
    return Status::Corruption(path + ": header checksum mismatch");
  }
  header->kind = static_cast<FileKind>(GetU32(p + 8));
  header->version = GetU32(p + 12);
  header->num_sectors = GetU64(p + 16);
  header->fields_size = GetU32(p + 24);
  if (header->kind != expected_kind) {
    return Status::Corruption(path + ": file kind " +
                              std::to_string(static_cast<std::uint32_t>(header->kind)) +
                              " where kind " +
                              std::to_string(static_cast<std::uint32_t>(expected_kind)) +
                              " was expected");
  }
  if (header->version == 0 || header->version > max_version) {
    return Status::NotSupported(path + ": format version " + std::to_string(header->version) +
                                " (this build reads up to " + std::to_string(max_version) + ")");
  }
  if (header->fields_size > kMaxHeaderFields) {
    return Status::Corruption(path + ": header fields size out of range");
  }
  fields->assign(reinterpret_cast<const char*>(p + kHeaderFixedSize), header->fields_size);
  return Status::OK();
}

Status ReadHeaderSector(const DirectFile& file, FileKind expected_kind, std::uint32_t max_version,
                        const std::string& path, FileHeader* header, std::string* fields,
                        std::uint64_t* size) {
  STRATA_ASSIGN_OR_RETURN(*size, file.Size());
  if (*size < kSector) return Status::Corruption(path + ": file too short for a header");
  AlignedBuffer sector(kSector);
  STRATA_RETURN_IF_ERROR(file.ReadAt(0, std::span<std::byte>(sector.data(), kSector)));
  return DecodeHeaderSector(std::span<const std::byte, kSector>(sector.data(), kSector),
                            expected_kind, max_version, path, header, fields);
}

void SealSector(std::span<std::byte, kSector> sector, FileKind kind, std::uint64_t sector_index) {
  PutU64(sector.data() + kSectorPayload,
         Checksum64(sector.data(), kSectorPayload, SectorSeed(kind, sector_index)));
}

Status VerifySector(std::span<const std::byte, kSector> sector, FileKind kind,
                    std::uint64_t sector_index, const std::string& path) {
  const std::uint64_t want = GetU64(sector.data() + kSectorPayload);
  if (want != Checksum64(sector.data(), kSectorPayload, SectorSeed(kind, sector_index))) {
    return Status::Corruption(path + ": checksum mismatch in sector " +
                              std::to_string(sector_index));
  }
  return Status::OK();
}

Result<SectorFileWriter> SectorFileWriter::Create(const std::string& path,
                                                  const FileHeader& header,
                                                  std::span<const std::byte> fields) {
  STRATA_ASSIGN_OR_RETURN(AtomicFileWriter writer,
                          AtomicFileWriter::Create(path, {.buffer_size = 4u << 20}));
  SectorFileWriter w(std::move(writer), header.kind, header.num_sectors);
  STRATA_RETURN_IF_ERROR(EncodeHeaderSector(header, fields, w.sector()));
  STRATA_RETURN_IF_ERROR(w.writer_.Append(w.sector()));
  std::memset(w.buffer_.data(), 0, kSector);
  return w;
}

Status SectorFileWriter::AppendSector() {
  SealSector(sector(), kind_, next_++);
  STRATA_RETURN_IF_ERROR(writer_.Append(sector()));
  std::memset(buffer_.data(), 0, kSector);
  return Status::OK();
}

Result<std::uint64_t> SectorFileWriter::Commit() {
  if (next_ != num_sectors_) {
    return Status::InvalidArgument("sector file: " + std::to_string(next_) +
                                   " sectors written, the header says " +
                                   std::to_string(num_sectors_));
  }
  const std::uint64_t size = writer_.size();
  STRATA_RETURN_IF_ERROR(writer_.Commit());
  return size;
}

Status OpenFixedSectorFile(const std::string& path, FileKind kind, std::uint32_t max_version,
                           std::size_t fields_size, DirectFile* file, FileHeader* header,
                           std::string* fields, bool grown, std::uint64_t* size_out) {
  STRATA_ASSIGN_OR_RETURN(*file, DirectFile::Open(path));
  std::uint64_t size = 0;
  STRATA_RETURN_IF_ERROR(ReadHeaderSector(*file, kind, max_version, path, header, fields, &size));
  if (size_out != nullptr) *size_out = size;
  if (fields->size() != fields_size) {
    return Status::Corruption(path + ": header fields of " + std::to_string(fields->size()) +
                              " bytes, expected " + std::to_string(fields_size));
  }
  if (grown ? (size < header->num_sectors * kSector || size % kSector != 0)
            : size != header->num_sectors * kSector) {
    return Status::Corruption(path + ": file size " + std::to_string(size) +
                              " does not match its header (" +
                              std::to_string(header->num_sectors) + " sectors)");
  }
  return Status::OK();
}

}  // namespace strata::format
