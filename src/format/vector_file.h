// The vector file of the decoupled graph layout: full-precision vectors in
// fixed slots, read only to re-rank (NAVIS's locality-driven decoupling keeps
// them apart from the edge lists, so an insert writes its own vector and no
// other). A sector file of kind kVectors:
//
//   header fields   dim u32 | element type u8 | reserved u8 x 3 |
//                   num_slots u64
//   sector s >= 1   vectors_per_sector = floor(4088 / vector bytes) slots,
//                   slot i at sector 1 + i / vectors_per_sector, byte
//                   (i % vectors_per_sector) x vector bytes (a vector of
//                   more than 4,088 bytes is not supported here)
//
// A slot's place is arithmetic, so the indirection table holds only the
// vertex's slot (4 B); updates write new vectors to free slots.
#ifndef STRATA_FORMAT_VECTOR_FILE_H_
#define STRATA_FORMAT_VECTOR_FILE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "format/sector_file.h"
#include "strata/io.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::format {

inline constexpr std::uint32_t kVectorFileVersion = 1;

struct VectorFileLayout {
  std::uint32_t dim = 0;
  ElementType element_type = ElementType::kFloat32;
  std::uint64_t num_slots = 0;
  // Derived by Make():
  std::uint32_t vector_bytes = 0;
  std::uint32_t vectors_per_sector = 0;

  // InvalidArgument for dim 0 or a vector larger than a sector's payload.
  static Result<VectorFileLayout> Make(std::uint32_t dim, ElementType type,
                                       std::uint64_t num_slots);
  std::uint64_t data_sectors() const {
    return (num_slots + vectors_per_sector - 1) / vectors_per_sector;
  }
  std::uint64_t SectorOf(std::uint64_t slot) const { return 1 + slot / vectors_per_sector; }
  std::size_t OffsetOf(std::uint64_t slot) const {
    return static_cast<std::size_t>(slot % vectors_per_sector) * vector_bytes;
  }
};

// Fills `out` (layout.vector_bytes, stored element type) with slot `slot`'s vector.
using VectorSource = std::function<Status(std::uint64_t slot, std::span<std::byte> out)>;

// Writes every slot in order, atomically (temporary file, fsync, rename).
// Returns the file's size in bytes.
Result<std::uint64_t> WriteVectorFile(const std::string& path, const VectorFileLayout& layout,
                                      const VectorSource& source);

class VectorFile {
 public:
  // NotFound / Corruption (header, size) / NotSupported (newer version).
  // With `grown`, the file may hold sectors past its header's count (slots
  // an in-place updater appended), and those slots are read too.
  static Result<VectorFile> Open(const std::string& path, bool grown = false);
  const VectorFileLayout& layout() const { return layout_; }
  const DirectFile& file() const { return file_; }
  const std::string& path() const { return file_.path(); }
  // Slots that may be read: the layout's, or those of every sector in a
  // grown file at open.
  std::uint64_t readable_slots() const { return readable_slots_; }
  // Verifies the sector holding `slot`, read into `sector`, and returns the
  // slot's bytes within it.
  Result<std::span<const std::byte>> Slot(std::uint64_t slot,
                                          std::span<const std::byte, kSector> sector) const;
  // Synchronously reads the sector holding `slot` into `sector` (4 KiB
  // aligned) and returns the slot's bytes.
  Result<std::span<const std::byte>> ReadSlot(std::uint64_t slot,
                                              std::span<std::byte, kSector> sector) const;

 private:
  DirectFile file_;
  VectorFileLayout layout_;
  std::uint64_t readable_slots_ = 0;
};

}  // namespace strata::format

#endif  // STRATA_FORMAT_VECTOR_FILE_H_
