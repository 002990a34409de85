// The SSD part of an IVF index: `ivf.records`, a sector file of kind
// kIvfRecords (sector_file.h) holding one fixed-size record per vector.
//
//   sector 0        header; fields (little-endian):
//                     u32 record_bytes  u32 records_per_unit  u32 pages_per_unit
//                     u32 reserved (0)  u64 num_clusters  u64 num_records
//                     u64 num_units     u64 sizes_checksum (Checksum64 of the
//                     cluster sizes, u64[num_clusters], so the file cannot be
//                     opened against another index's RAM tables)
//   sector 1 + p    data page p: records packed by ivf::PagePacking with a
//                   4088-byte payload (no record crosses a page unless it is
//                   larger than a payload; then it spans pages_per_unit pages);
//                   each cluster's records contiguous, starting on a fresh
//                   unit, in the cluster's storage order; zero padding.
//
// Unit u occupies sectors [1 + u * pages_per_unit, 1 + (u + 1) * pages_per_unit).
// Every sector carries its XXH3 trailer; VerifyUnit checks them on each read.
#ifndef STRATA_FORMAT_IVF_RECORDS_FILE_H_
#define STRATA_FORMAT_IVF_RECORDS_FILE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "format/sector_file.h"
#include "ivf/page_packing.h"
#include "strata/io.h"
#include "strata/result.h"

namespace strata::format {

inline constexpr std::uint32_t kIvfRecordsVersion = 1;

// Writes the record of storage position `pos` (packing.record_bytes() bytes)
// into `out`.
using IvfRecordSource = std::function<Status(std::uint64_t pos, std::uint8_t* out)>;

// Checksum64 of the cluster sizes (the header's sizes_checksum).
std::uint64_t ClusterSizesChecksum(std::span<const std::uint64_t> cluster_sizes);

// Writes every cluster's records (cluster c holds positions
// [sum of sizes before c, + sizes[c])) atomically to `path`. Returns the file
// size in bytes. Errors from `source` and the writer pass through.
Result<std::uint64_t> WriteIvfRecordsFile(const std::string& path, const ivf::PagePacking& packing,
                                          std::span<const std::uint64_t> cluster_sizes,
                                          const IvfRecordSource& source);

// An open records file: checked header, O_DIRECT descriptor for the I/O
// queues, and each cluster's first unit. Immutable; thread-safe.
class IvfRecordsFile {
 public:
  // Opens `path` for an index whose clusters have `cluster_sizes`.
  // NotFound / Corruption (bad header, size, or sizes that do not match) /
  // NotSupported (newer version), naming the path.
  static Result<IvfRecordsFile> Open(const std::string& path,
                                     std::span<const std::uint64_t> cluster_sizes);

  const ivf::PagePacking& packing() const { return packing_; }
  const DirectFile& file() const { return file_; }
  const std::string& path() const { return file_.path(); }
  std::uint64_t num_units() const { return first_unit_.back(); }
  // Unit where cluster c begins (size num_clusters + 1).
  const std::vector<std::uint64_t>& first_unit() const { return first_unit_; }
  // Byte offset and length of unit u in the file.
  std::uint64_t UnitOffset(std::uint64_t unit) const {
    return (1 + unit * packing_.pages_per_unit()) * kSector;
  }
  std::uint32_t UnitBytes() const {
    return static_cast<std::uint32_t>(packing_.pages_per_unit() * kSector);
  }

  // Checks the sector trailers of unit `unit` read into `buffer`
  // (UnitBytes() bytes). Corruption naming the file and sector.
  Status VerifyUnit(std::uint64_t unit, std::span<const std::byte> buffer) const;
  // Synchronous read + verify of one unit (tests, tools). `buffer` is
  // UnitBytes() bytes, 4 KiB aligned.
  Status ReadUnit(std::uint64_t unit, std::span<std::byte> buffer) const;

 private:
  DirectFile file_;
  ivf::PagePacking packing_;
  std::vector<std::uint64_t> first_unit_;
};

}  // namespace strata::format

#endif  // STRATA_FORMAT_IVF_RECORDS_FILE_H_
