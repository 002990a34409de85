// Record -> page arithmetic of the IVF records file (RaBitQ-SSD §3.2).
//
// Every vector has one fixed-size SSD record. Records are packed into 4 KiB
// pages whose usable payload is `payload_bytes` (kSectorPayload = 4088 in a
// sector file, the last 8 bytes being the sector checksum):
//   * record_bytes <= payload: a read unit is one page holding
//     records_per_unit = floor(payload / record_bytes) records; no record
//     crosses a page boundary; the tail of each page is zero.
//   * record_bytes > payload: a read unit is pages_per_unit =
//     ceil(record_bytes / payload) consecutive pages holding one record, split
//     across their payloads in order (the reader gathers them).
// Each cluster's records are contiguous and start on a fresh unit, in the
// cluster's storage order, so the unit of the record at position i of
// cluster c is first_unit[c] + i / records_per_unit and its slot is
// i % records_per_unit: a vector's page follows from its position alone.
//
// Thread-safety: immutable after Make; pure functions.
#ifndef STRATA_IVF_PAGE_PACKING_H_
#define STRATA_IVF_PAGE_PACKING_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "strata/result.h"

namespace strata::ivf {

// Where one record lives, relative to the first data page of the file.
struct RecordPlace {
  std::uint64_t unit = 0;         // read unit index (global)
  std::uint64_t first_page = 0;   // unit * pages_per_unit
  std::uint32_t slot = 0;         // record index within its unit
  std::uint32_t byte_offset = 0;  // slot * record_bytes within the unit's first payload
};

class PagePacking {
 public:
  // InvalidArgument if record_bytes == 0, payload_bytes == 0 or the record
  // needs more than 65536 pages.
  static Result<PagePacking> Make(std::size_t record_bytes, std::size_t payload_bytes);

  PagePacking() = default;

  std::size_t record_bytes() const { return record_bytes_; }
  std::size_t payload_bytes() const { return payload_bytes_; }
  std::uint32_t records_per_unit() const { return records_per_unit_; }
  std::uint32_t pages_per_unit() const { return pages_per_unit_; }

  // Read units needed by a cluster of n records: ceil(n / records_per_unit).
  std::uint64_t UnitsFor(std::uint64_t n) const {
    return (n + records_per_unit_ - 1) / records_per_unit_;
  }
  // first_unit table for clusters of the given sizes: size sizes.size() + 1,
  // first_unit[0] = 0, back() = total units.
  std::vector<std::uint64_t> FirstUnits(std::span<const std::uint64_t> cluster_sizes) const;
  // Place of the record at position `pos` of a cluster starting at unit
  // `cluster_first_unit`.
  RecordPlace Locate(std::uint64_t cluster_first_unit, std::uint64_t pos) const;

  // Copies one record into a unit buffer (pages_per_unit * page_stride bytes,
  // pages at `page_stride` apart; only payloads are written).
  void Scatter(const std::uint8_t* record, std::uint32_t slot, std::uint8_t* unit,
               std::size_t page_stride) const;
  // The record at `slot` of a read unit (pages `page_stride` apart): a pointer
  // into the unit when it lies in one page, else gathered into `scratch`
  // (record_bytes bytes) and `scratch` returned.
  const std::uint8_t* Gather(const std::uint8_t* unit, std::uint32_t slot, std::size_t page_stride,
                             std::uint8_t* scratch) const;

 private:
  std::size_t record_bytes_ = 0;
  std::size_t payload_bytes_ = 0;
  std::uint32_t records_per_unit_ = 1;
  std::uint32_t pages_per_unit_ = 1;
};

}  // namespace strata::ivf

#endif  // STRATA_IVF_PAGE_PACKING_H_
