// Edge pages: the adjacency half of the decoupled graph layout ("NAVIS:
// Concurrent Search and Update with Low Position-Seeking Overhead in On-SSD
// Graph-Based Vector Search", its locality-driven decoupling): edge lists
// kept apart from the vectors, many to a page, so that an insert rewrites
// the few edge lists it changes, gathered on a new page, and never the
// vectors beside them.
//
// An edge page is the payload of one sector of a sector file
// (sector_file.h: 4088 bytes, checksummed by its trailer, seeded with the
// sector number). It is a slotted page: a directory of slots at the front,
// the lists packed from the back, so that a page holds as many lists as
// their lengths allow. Lists are far shorter than their capacity (a Vamana
// graph of R 64 has a mean degree near 36, a vertex just inserted near
// 20): in fixed slots of the capacity a page held 11 lists of R 64, packed
// by length it holds about 27, so an insert's changed lists take fewer
// fresh pages and each page a walk fetches carries more lists.
//
//   page header (16 B)   magic u32 'EDGP', layout version u16, list
//                        capacity (most ids a list) u16, slots u16 (the
//                        directory's entries), vector bytes per list u16 (0
//                        in the decoupled layout), write epoch u32 (the
//                        update that wrote the page; 0 for a build)
//   slot directory       per slot: vertex u32 (the owner; kNoVertex when
//                        unused), offset u16 (of its list in the payload),
//                        degree u16
//   lists                from the end of the payload down: `degree` ids u32,
//                        then the vertex's vector when the lists carry one
//
// Lists that carry their vertex's vector make a packed layout, as DiskANN's
// and OdinANN's node records are (Guo et al., "OdinANN: Direct Insert for
// Consistently Stable Performance in Billion-Scale Graph-Based Vector
// Search"): the in-place baseline that decoupling is measured against, whose
// every changed list rewrites the vector beside it. Its records keep their
// fixed size, room for `capacity` ids whatever the degree, as those
// systems' records do (a record's place is computed, not looked up).
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
inline constexpr std::uint16_t kEdgePageVersion = 2;
inline constexpr std::size_t kEdgePageHeader = 16;
inline constexpr std::size_t kEdgeSlotHeader = 8;  // a directory entry
// Bytes for the directory and the lists.
inline constexpr std::size_t kEdgePageRoom = kSectorPayload - kEdgePageHeader;
inline constexpr std::uint32_t kNoVertex = 0xFFFFFFFFu;

// Page geometry for a given capacity (most ids a list) and vector size.
struct EdgePageGeometry {
  std::uint16_t capacity = 0;
  std::uint16_t vector_bytes = 0;  // 0: the decoupled layout (vectors in a file of their own)
  // The most lists a page holds: lists without edges in the decoupled
  // layout, full records in the packed one.
  std::uint32_t slots_per_page = 0;
  // Packed records keep room for `capacity` ids (see above).
  bool fixed_size() const { return vector_bytes > 0; }
  // The page bytes a list of `degree` ids takes, its directory entry included.
  std::uint32_t ListBytes(std::size_t degree) const {
    return static_cast<std::uint32_t>(kEdgeSlotHeader + 4 * (fixed_size() ? capacity : degree) +
                                      vector_bytes);
  }
  // InvalidArgument for capacity 0 or a slot that does not fit a page.
  static Result<EdgePageGeometry> ForCapacity(std::uint32_t capacity,
                                              std::uint32_t vector_bytes = 0);
  // The capacity NAVIS uses for out-degree R: ceil(1.3 R).
  static std::uint32_t CapacityForDegree(std::uint32_t R) { return (13 * R + 9) / 10; }
};

// Writes pages: Clear() then Put() or Append() lists, then the payload is
// ready.
class EdgePageWriter {
 public:
  EdgePageWriter(const EdgePageGeometry& g, std::span<std::byte, kSectorPayload> payload)
      : g_(g), page_(payload) {}
  // An empty page (no slots) written by `epoch`.
  void Clear(std::uint32_t epoch);
  // Slot `slot` holds `vertex`'s list (and its vector: exactly
  // vector_bytes, empty when the lists carry none); slots up to it that
  // did not exist are added unused. A slot written again takes new room
  // (the old list's is not reclaimed). InvalidArgument when the vertex is
  // kNoVertex, the list is longer than the capacity or the vector of
  // another size; OutOfRange when it does not fit the room left.
  Status Put(std::uint32_t slot, std::uint32_t vertex, std::span<const std::uint32_t> ids,
             std::span<const std::byte> vector = {});
  // Put in a new slot after the others; returns the slot.
  Result<std::uint16_t> Append(std::uint32_t vertex, std::span<const std::uint32_t> ids,
                               std::span<const std::byte> vector = {});
  // Whether a list of `degree` ids fits a new slot.
  bool Fits(std::size_t degree) const { return g_.ListBytes(degree) <= Room(); }
  std::uint32_t slots() const { return slots_; }
  // Bytes left for new slots and their lists.
  std::size_t Room() const { return low_ - kEdgePageHeader - kEdgeSlotHeader * slots_; }

 private:
  EdgePageGeometry g_;
  std::span<std::byte, kSectorPayload> page_;
  std::uint32_t slots_ = 0;
  std::size_t low_ = kSectorPayload;  // where the lowest list starts
};

// Reads a page whose sector trailer has been verified.
class EdgePageReader {
 public:
  // Corruption for a wrong magic, an unknown version, a capacity or vector
  // size other than `g`'s or a directory past the page; the page must
  // outlive the reader.
  static Result<EdgePageReader> Open(const EdgePageGeometry& g,
                                     std::span<const std::byte, kSectorPayload> payload);
  std::uint32_t epoch() const { return epoch_; }
  std::uint32_t slots() const { return slots_; }  // directory entries, used or not
  std::uint32_t vertex(std::uint32_t slot) const;  // kNoVertex past slots()
  // `vertex`'s list in `slot`: Corruption when the slot belongs to another
  // vertex (a stale indirection), its degree exceeds the capacity or its
  // list lies outside the page.
  Result<std::span<const std::byte>> Edges(std::uint32_t slot, std::uint32_t vertex,
                                           std::uint16_t* degree) const;
  // Id `i` of a list Edges returned.
  static std::uint32_t Id(std::span<const std::byte> edges, std::size_t i);
  // The vector in slot `slot` (vector_bytes; empty when the lists carry
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
  std::uint32_t slots_ = 0;
};

}  // namespace strata::format

#endif  // STRATA_FORMAT_EDGE_PAGE_H_
