// Edge pages: the adjacency half of the decoupled graph layout ("NAVIS:
// Concurrent Search and Update with Low Position-Seeking Overhead in On-SSD
// Graph-Based Vector Search", its locality-driven decoupling): edge lists
// kept apart from the vectors, many to a page, so that an insert rewrites
// the few edge lists it changes, gathered on a new page, and never the
// vectors beside them.
//
// An edge page is the payload of one sector of a sector file
// (sector_file.h: 4088 bytes, checksummed by its trailer, seeded with the
// sector number). It holds the edge lists of up to `slots_per_page`
// vertices, each in a fixed-width slot:
//
//   page header (16 B)   magic u32 'EDGP', layout version u16, slot capacity
//                        (ids per slot) u16, used slots u16 (slots with an
//                        owner), vector bytes per slot u16 (0 in the
//                        decoupled layout), write epoch u32 (the update
//                        that wrote the page; 0 for a build)
//   slot i               vertex u32 (the owner; kNoVertex when unused),
//                        degree u16, reserved u16, `capacity` ids u32
//                        (the first `degree` valid, the rest zero), then
//                        the vertex's vector when the slot carries one
//
// Slots that carry their vertex's vector make a packed layout, as DiskANN's
// and OdinANN's node records are (Guo et al., "OdinANN: Direct Insert for
// Consistently Stable Performance in Billion-Scale Graph-Based Vector
// Search"): the in-place baseline that decoupling is measured against, whose
// every changed list rewrites the vector beside it.
//
// A slot names its owner so that a page read through a stale indirection
// entry (a vertex that has moved out of place) is detected rather than
// followed; the capacity is fixed per file (NAVIS: 1.3 R, room for the
// back-edges an insert adds before the list is pruned).
#ifndef STRATA_FORMAT_EDGE_PAGE_H_
#define STRATA_FORMAT_EDGE_PAGE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "format/sector_file.h"
#include "strata/result.h"
#include "strata/status.h"

namespace strata::format {

inline constexpr std::uint32_t kEdgePageMagic = 0x50474445;  // "EDGP"
inline constexpr std::uint16_t kEdgePageVersion = 1;
inline constexpr std::size_t kEdgePageHeader = 16;
inline constexpr std::size_t kEdgeSlotHeader = 8;
inline constexpr std::uint32_t kNoVertex = 0xFFFFFFFFu;

// Slot geometry for a given capacity (ids per slot) and vector size.
struct EdgePageGeometry {
  std::uint16_t capacity = 0;
  std::uint16_t vector_bytes = 0;  // 0: the decoupled layout (vectors in a file of their own)
  std::uint32_t slot_bytes = 0;
  std::uint32_t slots_per_page = 0;
  // InvalidArgument for capacity 0 or a slot that does not fit a page.
  static Result<EdgePageGeometry> ForCapacity(std::uint32_t capacity,
                                              std::uint32_t vector_bytes = 0);
  // The capacity NAVIS uses for out-degree R: ceil(1.3 R).
  static std::uint32_t CapacityForDegree(std::uint32_t R) { return (13 * R + 9) / 10; }
};

// Writes pages: Clear() then Put() slots, then the payload is ready.
class EdgePageWriter {
 public:
  EdgePageWriter(const EdgePageGeometry& g, std::span<std::byte, kSectorPayload> payload)
      : g_(g), page_(payload) {}
  // An empty page (every slot unused) written by `epoch`.
  void Clear(std::uint32_t epoch);
  // Slot `slot` holds `vertex`'s list (and its vector: exactly
  // vector_bytes, empty when the slots carry none). InvalidArgument when
  // the slot is out of range, the vertex is kNoVertex, the list longer than
  // the capacity or the vector of another size.
  Status Put(std::uint32_t slot, std::uint32_t vertex, std::span<const std::uint32_t> ids,
             std::span<const std::byte> vector = {});

 private:
  EdgePageGeometry g_;
  std::span<std::byte, kSectorPayload> page_;
};

// Reads a page whose sector trailer has been verified.
class EdgePageReader {
 public:
  // Corruption for a wrong magic, an unknown version, a capacity or vector
  // size other than `g`'s or a used count past the page; the page must
  // outlive the reader.
  static Result<EdgePageReader> Open(const EdgePageGeometry& g,
                                     std::span<const std::byte, kSectorPayload> payload);
  std::uint32_t epoch() const { return epoch_; }
  std::uint16_t used() const { return used_; }
  std::uint32_t vertex(std::uint32_t slot) const;
  // `vertex`'s list in `slot`: Corruption when the slot belongs to another
  // vertex (a stale indirection) or its degree exceeds the capacity.
  Result<std::span<const std::byte>> Edges(std::uint32_t slot, std::uint32_t vertex,
                                           std::uint16_t* degree) const;
  // Id `i` of a list Edges returned.
  static std::uint32_t Id(std::span<const std::byte> edges, std::size_t i);
  // The vector in slot `slot` (vector_bytes; empty when the slots carry
  // none). Only for a slot Edges accepted.
  std::span<const std::byte> Vector(std::uint32_t slot) const;
  // `vertex`'s list in `slot` decoded into `ids`, and its vector copied into
  // `vector` unless it is null (empty when the slots carry none): the one
  // decoding every reader of a whole list shares. Corruption as Edges.
  Status ReadList(std::uint32_t slot, std::uint32_t vertex, std::vector<std::uint32_t>* ids,
                  std::vector<std::byte>* vector = nullptr) const;

 private:
  EdgePageGeometry g_;
  const std::byte* page_ = nullptr;
  std::uint32_t epoch_ = 0;
  std::uint16_t used_ = 0;
};

}  // namespace strata::format

#endif  // STRATA_FORMAT_EDGE_PAGE_H_
