// Byte layout of graph-index node records in a sector file (kind kGraphNodes).
//
// Record (fixed width, little-endian):
//   vector      dim elements of the stored element type (float32, float16,
//               bfloat16, uint8, int8), as given at build time (normalised for
//               cosine)
//   degree      u32, number of valid neighbour slots (<= max_degree)
//   neighbours  max_degree ids of id_bytes bytes each (4 when the index has
//               fewer than 2^32 - 1 slots, else 8: no 4-billion cap); unused
//               slots are zero. Ids are slot numbers (see below).
//   external    (only with external_ids) id_bytes: the vector's id as the
//               user knows it (its row in the base file); all ones marks an
//               empty slot
//   codes       (only with code_bytes > 0, the all-in-storage layout)
//               max_degree PQ codes of code_bytes each, the codes of the
//               neighbours in neighbour order; unused entries zero
//
// Placement: a node's slot number is its id inside the index; slot s lives
// in sector 1 + s / records_per_sector at byte (s % records_per_sector) *
// record of that sector's payload (records_per_sector = floor(4088 / record),
// none straddles a sector boundary). A record larger than one payload spans
// sectors_per_record = ceil(record / 4088) consecutive sectors, its bytes laid
// across their payloads in order; slot s then starts at sector
// 1 + s * sectors_per_record. The packed layout uses slot = row (no external
// ids); the shuffled layout (page shuffle) renumbers rows so that graph
// neighbours share pages, stores each row in its record's external field and
// may leave empty slots (num_slots >= num_nodes), so RAM needs no id -> page
// map: a slot's page is arithmetic.
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

inline constexpr std::uint32_t kGraphLayoutVersion = 2;

// Where a record lives: first sector, byte offset in that sector's payload, and
// how many sectors one read must fetch.
struct RecordLocation {
  std::uint64_t sector = 0;
  std::uint32_t offset = 0;
  std::uint32_t sectors = 1;
};

// What a layout is made from; GraphLayout::Make derives the rest.
struct GraphLayoutSpec {
  std::uint32_t dim = 0;
  ElementType element_type = ElementType::kFloat32;
  std::uint32_t max_degree = 0;
  std::uint64_t num_nodes = 0;
  std::uint64_t num_slots = 0;     // >= num_nodes; 0 means num_nodes
  bool external_ids = false;       // records carry their external id
  std::uint32_t code_bytes = 0;    // neighbours' PQ codes inline (all-in-storage); 0 = none
};

struct GraphLayout {
  std::uint32_t dim = 0;
  ElementType element_type = ElementType::kFloat32;
  std::uint32_t max_degree = 0;
  std::uint32_t id_bytes = 4;
  std::uint64_t num_nodes = 0;
  std::uint64_t num_slots = 0;
  bool external_ids = false;
  std::uint32_t code_bytes = 0;
  // Derived by Make():
  std::uint32_t vector_bytes = 0;
  std::uint32_t record_bytes = 0;
  std::uint32_t records_per_sector = 0;  // 0 when a record spans several sectors
  std::uint32_t sectors_per_record = 1;

  // Computes the derived fields. InvalidArgument for dim 0, degree 0 or above
  // 4096, zero nodes, or fewer slots than nodes.
  static Result<GraphLayout> Make(const GraphLayoutSpec& spec);
  // The packed layout: slot = row, no external ids, no inline codes.
  static Result<GraphLayout> Make(std::uint32_t dim, ElementType type, std::uint32_t max_degree,
                                  std::uint64_t num_nodes) {
    return Make(GraphLayoutSpec{dim, type, max_degree, num_nodes, 0, false, 0});
  }

  // Sectors holding records (the file has 1 + data_sectors()).
  std::uint64_t data_sectors() const;
  RecordLocation Locate(std::uint64_t slot) const;
  // Records sharing one read unit (1 for multi-sector records).
  std::uint32_t records_per_page() const { return records_per_sector ? records_per_sector : 1; }
  // The read unit (first sector) holding `slot`; slots p * records_per_page()
  // .. + records_per_page() - 1 share it.
  std::uint64_t PageOf(std::uint64_t slot) const { return slot / records_per_page(); }

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
  // The row this record holds: the stored external id, or the slot itself
  // for layouts without external ids; kInvalidVectorId for an empty slot.
  VectorId external_id = kInvalidVectorId;
  // Neighbours' PQ codes (degree * code_bytes) in all-in-storage records, else null.
  const std::uint8_t* codes = nullptr;
  VectorId neighbour(std::uint32_t i) const;
};

// Decodes the record of `slot` at `loc` from `sectors` (loc.sectors * kSector
// bytes read from loc.sector on). For multi-sector records the payload parts
// are gathered into `scratch`. Corruption if the degree exceeds max_degree or
// the external id is out of range.
Status DecodeRecord(const GraphLayout& layout, std::uint64_t slot, const RecordLocation& loc,
                    std::span<const std::byte> sectors, std::vector<std::byte>* scratch,
                    NodeRecordView* out);
// Decodes a record whose bytes are contiguous at `record` (record_bytes), as
// kept by the node cache.
Status DecodeContiguousRecord(const GraphLayout& layout, std::uint64_t slot,
                              const std::byte* record, NodeRecordView* out);

// Encodes one record into `out` (record_bytes). `external_id` is stored when
// the layout has external ids; `codes` (neighbours.size() * code_bytes) when
// it has inline codes. InvalidArgument if there are more neighbours than
// max_degree, an id is out of range or a size does not match.
Status EncodeRecord(const GraphLayout& layout, std::span<const std::byte> vector,
                    std::span<const VectorId> neighbours, std::span<std::byte> out,
                    VectorId external_id = kInvalidVectorId,
                    std::span<const std::uint8_t> codes = {});
// Encodes an empty slot (shuffled layouts only: it needs external ids).
Status EncodeEmptyRecord(const GraphLayout& layout, std::span<std::byte> out);

}  // namespace strata::format

#endif  // STRATA_FORMAT_GRAPH_LAYOUT_H_
