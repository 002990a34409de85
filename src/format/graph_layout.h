// Byte layout of graph-index node records in a sector file (kind kGraphNodes).
//
// Record (fixed width, little-endian):
//   vector      dim elements of the stored element type (float32, float16,
//               bfloat16, uint8, int8), as given at build time (normalised for
//               cosine)
//   degree      u32, number of valid neighbour slots (<= max_degree)
//   neighbours  max_degree ids of id_bytes bytes each (4 when the index has
//               fewer than 2^32 - 1 nodes, else 8: no 4-billion cap); unused
//               slots are zero
//   inline      inline_bytes per record reserved for later layouts
//               (neighbours' codes in all-in-storage records); 0 in version 1
//
// Placement ("packed", version 1): records_per_sector = floor(4088 / record)
// records share a sector, none straddles a sector boundary; node i lives in
// sector 1 + i / records_per_sector at byte (i % records_per_sector) * record
// of that sector's payload. A record larger than one payload spans
// sectors_per_record = ceil(record / 4088) consecutive sectors, its bytes laid
// across their payloads in order; node i then starts at sector
// 1 + i * sectors_per_record. Layouts that reorder nodes (page shuffle) add an
// id -> slot map; the record format stays the same.
#ifndef STRATA_FORMAT_GRAPH_LAYOUT_H_
#define STRATA_FORMAT_GRAPH_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/sector_file.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::format {

inline constexpr std::uint32_t kGraphLayoutVersion = 1;

// Where a record lives: first sector, byte offset in that sector's payload, and
// how many sectors one read must fetch.
struct RecordLocation {
  std::uint64_t sector = 0;
  std::uint32_t offset = 0;
  std::uint32_t sectors = 1;
};

struct GraphLayout {
  std::uint32_t dim = 0;
  ElementType element_type = ElementType::kFloat32;
  std::uint32_t max_degree = 0;
  std::uint32_t id_bytes = 4;
  std::uint32_t inline_bytes = 0;
  std::uint64_t num_nodes = 0;
  // Derived by Make():
  std::uint32_t vector_bytes = 0;
  std::uint32_t record_bytes = 0;
  std::uint32_t records_per_sector = 0;  // 0 when a record spans several sectors
  std::uint32_t sectors_per_record = 1;

  // Computes the derived fields. InvalidArgument for dim 0, degree 0 or above
  // 4096, or zero nodes.
  static Result<GraphLayout> Make(std::uint32_t dim, ElementType type, std::uint32_t max_degree,
                                  std::uint64_t num_nodes, std::uint32_t inline_bytes = 0);

  // Sectors holding records (the file has 1 + data_sectors()).
  std::uint64_t data_sectors() const;
  RecordLocation Locate(std::uint64_t node) const;

  // Header fields (kind-specific part of sector 0) and back; Decode checks
  // that the stored derived fields agree with what Make() computes.
  std::string EncodeFields() const;
  static Result<GraphLayout> DecodeFields(const std::string& fields, const std::string& path);
};

// A decoded view of one record. `vector` points into the read buffer (or the
// gather scratch for multi-sector records); valid while those live.
struct NodeRecordView {
  std::span<const std::byte> vector;
  std::uint32_t degree = 0;
  const std::byte* neighbours = nullptr;  // degree ids of id_bytes each
  std::uint32_t id_bytes = 4;
  VectorId neighbour(std::uint32_t i) const;
};

// Decodes the record at `loc` from `sectors` (loc.sectors * kSector bytes read
// from loc.sector on). For multi-sector records the payload parts are gathered
// into `scratch`. Corruption if the degree exceeds max_degree.
Status DecodeRecord(const GraphLayout& layout, const RecordLocation& loc,
                    std::span<const std::byte> sectors, std::vector<std::byte>* scratch,
                    NodeRecordView* out);

// Encodes one record into `out` (record_bytes). InvalidArgument if there are
// more neighbours than max_degree or an id does not fit id_bytes.
Status EncodeRecord(const GraphLayout& layout, std::span<const std::byte> vector,
                    std::span<const VectorId> neighbours, std::span<std::byte> out);

}  // namespace strata::format

#endif  // STRATA_FORMAT_GRAPH_LAYOUT_H_
