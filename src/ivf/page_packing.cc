#include "ivf/page_packing.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace strata::ivf {

Result<PagePacking> PagePacking::Make(std::size_t record_bytes, std::size_t payload_bytes) {
  if (record_bytes == 0 || payload_bytes == 0) {
    return Status::InvalidArgument("page packing: record and payload sizes must be positive");
  }
  PagePacking p;
  p.record_bytes_ = record_bytes;
  p.payload_bytes_ = payload_bytes;
  if (record_bytes <= payload_bytes) {
    p.records_per_unit_ = static_cast<std::uint32_t>(payload_bytes / record_bytes);
    p.pages_per_unit_ = 1;
  } else {
    const std::size_t pages = (record_bytes + payload_bytes - 1) / payload_bytes;
    if (pages > 65536) {
      return Status::InvalidArgument("page packing: record of " + std::to_string(record_bytes) +
                                     " bytes spans too many pages");
    }
    p.records_per_unit_ = 1;
    p.pages_per_unit_ = static_cast<std::uint32_t>(pages);
  }
  return p;
}

std::vector<std::uint64_t> PagePacking::FirstUnits(
    std::span<const std::uint64_t> cluster_sizes) const {
  std::vector<std::uint64_t> first(cluster_sizes.size() + 1, 0);
  for (std::size_t c = 0; c < cluster_sizes.size(); ++c) {
    first[c + 1] = first[c] + UnitsFor(cluster_sizes[c]);
  }
  return first;
}

RecordPlace PagePacking::Locate(std::uint64_t cluster_first_unit, std::uint64_t pos) const {
  RecordPlace r;
  r.unit = cluster_first_unit + pos / records_per_unit_;
  r.first_page = r.unit * pages_per_unit_;
  r.slot = static_cast<std::uint32_t>(pos % records_per_unit_);
  r.byte_offset = static_cast<std::uint32_t>(r.slot * record_bytes_);
  return r;
}

void PagePacking::Scatter(const std::uint8_t* record, std::uint32_t slot, std::uint8_t* unit,
                          std::size_t page_stride) const {
  if (pages_per_unit_ == 1) {
    std::memcpy(unit + static_cast<std::size_t>(slot) * record_bytes_, record, record_bytes_);
    return;
  }
  for (std::uint32_t p = 0; p < pages_per_unit_; ++p) {
    const std::size_t begin = static_cast<std::size_t>(p) * payload_bytes_;
    const std::size_t n = std::min(payload_bytes_, record_bytes_ - begin);
    std::memcpy(unit + p * page_stride, record + begin, n);
  }
}

const std::uint8_t* PagePacking::Gather(const std::uint8_t* unit, std::uint32_t slot,
                                        std::size_t page_stride, std::uint8_t* scratch) const {
  if (pages_per_unit_ == 1) return unit + static_cast<std::size_t>(slot) * record_bytes_;
  for (std::uint32_t p = 0; p < pages_per_unit_; ++p) {
    const std::size_t begin = static_cast<std::size_t>(p) * payload_bytes_;
    const std::size_t n = std::min(payload_bytes_, record_bytes_ - begin);
    std::memcpy(scratch + begin, unit + p * page_stride, n);
  }
  return scratch;
}

}  // namespace strata::ivf
