// Checksummed sector files: the container of every SSD-resident index file.
//
// A sector file is a sequence of 4 KiB sectors (the O_DIRECT read unit):
//
//   sector 0            header: FileHeader (below), zero padded, checksummed
//   sector s >= 1       payload: kSectorPayload (4088) bytes of data, then an
//                       8-byte little-endian trailer = XXH3-64 of the payload
//                       seeded with (kind << 40) ^ s
//
// Seeding the trailer with the sector number and file kind means a sector
// written to the wrong place, or a sector of another file, fails its check
// just like a flipped bit. Every read of a sector verifies its trailer
// (VerifySector, ~0.1 us per sector), so a damaged index is reported as
// Corruption at the read that meets the damage, never used silently.
// Byte layouts are documented in docs/format.md.
#ifndef STRATA_FORMAT_SECTOR_FILE_H_
#define STRATA_FORMAT_SECTOR_FILE_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "base/aligned_buffer.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/status.h"

namespace strata::format {

inline constexpr std::size_t kSector = 4096;
inline constexpr std::size_t kSectorTrailer = 8;
inline constexpr std::size_t kSectorPayload = kSector - kSectorTrailer;  // 4088

// File kinds (stored in the header; also part of every sector's checksum seed).
enum class FileKind : std::uint32_t {
  kGraphNodes = 1,  // graph index node records (vectors + adjacency)
  kPqCodes = 2,     // PQ codebook and codes (loaded to RAM)
  kIvfRecords = 3,  // IVF RaBitQ SSD records
  kEdgePages = 4,   // decoupled graph layout: edge lists only (edge_page.h)
  kVectors = 5,     // decoupled graph layout: vectors in fixed slots (vector_file.h)
};

// The first 64 bytes of sector 0, followed by `fields_size` bytes of
// kind-specific fields (little-endian), all covered by header_checksum.
struct FileHeader {
  static constexpr std::array<char, 8> kMagic = {'S', 'T', 'R', 'A', 'T', 'A', 'F', '1'};
  FileKind kind = FileKind::kGraphNodes;
  std::uint32_t version = 1;        // layout version of this kind
  std::uint64_t num_sectors = 0;    // total sectors in the file, header included
  std::uint32_t fields_size = 0;    // bytes of kind-specific fields after the fixed part
};

// Fixed part of the header on disk (bytes): magic[8] kind u32 version u32
// num_sectors u64 fields_size u32 reserved u32 header_checksum u64 reserved[24].
inline constexpr std::size_t kHeaderFixedSize = 64;
inline constexpr std::size_t kMaxHeaderFields = kSector - kHeaderFixedSize;

// Encodes a header sector (kSector bytes) from `header` and `fields`.
// InvalidArgument if fields are larger than kMaxHeaderFields.
Status EncodeHeaderSector(const FileHeader& header, std::span<const std::byte> fields,
                          std::span<std::byte, kSector> out);
// Decodes and checks a header sector: magic, checksum, expected kind and a
// version no newer than `max_version`. Corruption / NotSupported with `path`
// in the message. On success copies the fields into `fields` (resized).
Status DecodeHeaderSector(std::span<const std::byte, kSector> sector, FileKind expected_kind,
                          std::uint32_t max_version, const std::string& path,
                          FileHeader* header, std::string* fields);

// Reads the header sector of an open sector file and checks it as
// DecodeHeaderSector does; `size` gets the file's size in bytes. Corruption
// for a file shorter than one sector.
Status ReadHeaderSector(const DirectFile& file, FileKind expected_kind, std::uint32_t max_version,
                        const std::string& path, FileHeader* header, std::string* fields,
                        std::uint64_t* size);

// Seals payload sector `sector_index` (>= 1): writes the trailer checksum.
void SealSector(std::span<std::byte, kSector> sector, FileKind kind, std::uint64_t sector_index);
// Checks the trailer of payload sector `sector_index`; Corruption naming the
// file and sector on a mismatch.
Status VerifySector(std::span<const std::byte, kSector> sector, FileKind kind,
                    std::uint64_t sector_index, const std::string& path);

// Writes a sector file front to back, atomically (temporary file, fsync,
// rename at Commit): the header, then each payload sector filled in
// sector() and sealed by AppendSector with the next sector number.
class SectorFileWriter {
 public:
  static Result<SectorFileWriter> Create(const std::string& path, const FileHeader& header,
                                         std::span<const std::byte> fields);
  // The next payload sector, zeroed after each AppendSector.
  std::span<std::byte, kSector> sector() {
    return std::span<std::byte, kSector>(buffer_.data(), kSector);
  }
  Status AppendSector();
  // InvalidArgument (and no file) when the sectors appended are not the
  // header's; else the file's size in bytes.
  Result<std::uint64_t> Commit();

 private:
  SectorFileWriter(AtomicFileWriter writer, FileKind kind, std::uint64_t num_sectors)
      : writer_(std::move(writer)), buffer_(kSector), kind_(kind), num_sectors_(num_sectors) {}
  AtomicFileWriter writer_;
  AlignedBuffer buffer_;
  FileKind kind_;
  std::uint64_t num_sectors_;
  std::uint64_t next_ = 1;
};

// Opens a sector file whose kind-specific header fields have a fixed size:
// its header checked (ReadHeaderSector) and its size against the header's
// sector count. Corruption / NotSupported with `path` in the message. With
// `grown`, the file may hold whole sectors past the header's count (pages
// and slots an in-place updater appended); `size` (may be null) gets the
// file's size either way.
Status OpenFixedSectorFile(const std::string& path, FileKind kind, std::uint32_t max_version,
                           std::size_t fields_size, DirectFile* file, FileHeader* header,
                           std::string* fields, bool grown = false,
                           std::uint64_t* size = nullptr);

}  // namespace strata::format

#endif  // STRATA_FORMAT_SECTOR_FILE_H_
