#include "format/ivf_records_file.h"

#include <cstring>

#include "base/aligned_buffer.h"
#include "base/checksum.h"
#include "format/le_coding.h"

namespace strata::format {
namespace {

constexpr std::size_t kFieldsSize = 48;

}  // namespace

std::uint64_t ClusterSizesChecksum(std::span<const std::uint64_t> cluster_sizes) {
  return Checksum64(cluster_sizes.data(), cluster_sizes.size_bytes(), 0x49564652ull);
}

Result<std::uint64_t> WriteIvfRecordsFile(const std::string& path, const ivf::PagePacking& packing,
                                          std::span<const std::uint64_t> cluster_sizes,
                                          const IvfRecordSource& source) {
  if (packing.payload_bytes() != kSectorPayload) {
    return Status::InvalidArgument("ivf records: packing must use the sector payload size");
  }
  const std::vector<std::uint64_t> first = packing.FirstUnits(cluster_sizes);
  const std::uint32_t ppu = packing.pages_per_unit();
  std::uint64_t num_records = 0;
  for (std::uint64_t s : cluster_sizes) num_records += s;

  STRATA_ASSIGN_OR_RETURN(AtomicFileWriter writer,
                          AtomicFileWriter::Create(path, {.buffer_size = 4u << 20}));
  AlignedBuffer unit(static_cast<std::size_t>(ppu) * kSector);
  std::byte fields[kFieldsSize] = {};
  PutU32(fields + 0, static_cast<std::uint32_t>(packing.record_bytes()));
  PutU32(fields + 4, packing.records_per_unit());
  PutU32(fields + 8, ppu);
  PutU64(fields + 16, cluster_sizes.size());
  PutU64(fields + 24, num_records);
  PutU64(fields + 32, first.back());
  PutU64(fields + 40, ClusterSizesChecksum(cluster_sizes));
  FileHeader header;
  header.kind = FileKind::kIvfRecords;
  header.version = kIvfRecordsVersion;
  header.num_sectors = 1 + first.back() * ppu;
  STRATA_RETURN_IF_ERROR(
      EncodeHeaderSector(header, fields, std::span<std::byte, kSector>(unit.data(), kSector)));
  STRATA_RETURN_IF_ERROR(writer.Append(std::span<const std::byte>(unit.data(), kSector)));

  std::vector<std::uint8_t> record(packing.record_bytes());
  auto* bytes = reinterpret_cast<std::uint8_t*>(unit.data());
  std::uint64_t pos = 0;
  for (std::size_t c = 0; c < cluster_sizes.size(); ++c) {
    for (std::uint64_t u = first[c]; u < first[c + 1]; ++u) {
      std::memset(unit.data(), 0, unit.size());
      const std::uint64_t begin = (u - first[c]) * packing.records_per_unit();
      const std::uint64_t end =
          std::min<std::uint64_t>(cluster_sizes[c], begin + packing.records_per_unit());
      for (std::uint64_t i = begin; i < end; ++i) {
        STRATA_RETURN_IF_ERROR(source(pos + i, record.data()));
        packing.Scatter(record.data(), static_cast<std::uint32_t>(i - begin), bytes, kSector);
      }
      for (std::uint32_t p = 0; p < ppu; ++p) {
        SealSector(std::span<std::byte, kSector>(unit.data() + p * kSector, kSector),
                   FileKind::kIvfRecords, 1 + u * ppu + p);
      }
      STRATA_RETURN_IF_ERROR(writer.Append(std::span<const std::byte>(unit.data(), unit.size())));
    }
    pos += cluster_sizes[c];
  }
  const std::uint64_t size = writer.size();
  STRATA_RETURN_IF_ERROR(writer.Commit());
  return size;
}

Result<IvfRecordsFile> IvfRecordsFile::Open(const std::string& path,
                                            std::span<const std::uint64_t> cluster_sizes) {
  IvfRecordsFile f;
  STRATA_ASSIGN_OR_RETURN(f.file_, DirectFile::Open(path));
  FileHeader header;
  std::string fields;
  std::uint64_t size = 0;
  STRATA_RETURN_IF_ERROR(ReadHeaderSector(f.file_, FileKind::kIvfRecords, kIvfRecordsVersion,
                                          path, &header, &fields, &size));
  if (fields.size() < kFieldsSize) return Status::Corruption(path + ": short header fields");
  const auto* p = reinterpret_cast<const std::byte*>(fields.data());
  const std::uint32_t record_bytes = GetU32(p + 0);
  auto packing = ivf::PagePacking::Make(record_bytes, kSectorPayload);
  if (!packing.ok()) return Status::Corruption(path + ": bad record size");
  f.packing_ = *packing;
  if (GetU32(p + 4) != f.packing_.records_per_unit() ||
      GetU32(p + 8) != f.packing_.pages_per_unit()) {
    return Status::Corruption(path + ": packing fields are inconsistent");
  }
  if (GetU64(p + 16) != cluster_sizes.size() ||
      GetU64(p + 40) != ClusterSizesChecksum(cluster_sizes)) {
    return Status::Corruption(path + ": records file does not match the index's cluster table");
  }
  f.first_unit_ = f.packing_.FirstUnits(cluster_sizes);
  std::uint64_t records = 0;
  for (std::uint64_t s : cluster_sizes) records += s;
  if (GetU64(p + 24) != records || GetU64(p + 32) != f.first_unit_.back() ||
      header.num_sectors != 1 + f.first_unit_.back() * f.packing_.pages_per_unit() ||
      size != header.num_sectors * kSector) {
    return Status::Corruption(path + ": file size " + std::to_string(size) +
                              " does not match its header");
  }
  return f;
}

Status IvfRecordsFile::VerifyUnit(std::uint64_t unit, std::span<const std::byte> buffer) const {
  const std::uint32_t ppu = packing_.pages_per_unit();
  if (buffer.size() < UnitBytes()) return Status::InvalidArgument("ivf records: short unit buffer");
  for (std::uint32_t s = 0; s < ppu; ++s) {
    STRATA_RETURN_IF_ERROR(
        VerifySector(std::span<const std::byte, kSector>(buffer.data() + s * kSector, kSector),
                     FileKind::kIvfRecords, 1 + unit * ppu + s, path()));
  }
  return Status::OK();
}

Status IvfRecordsFile::ReadUnit(std::uint64_t unit, std::span<std::byte> buffer) const {
  if (unit >= num_units()) return Status::OutOfRange("ivf records: unit past the end");
  STRATA_RETURN_IF_ERROR(file_.ReadAt(UnitOffset(unit), buffer.first(UnitBytes())));
  return VerifyUnit(unit, buffer);
}

}  // namespace strata::format
