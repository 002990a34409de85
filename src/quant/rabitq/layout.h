// RaBitQ codes and their byte-exact packed layouts for an IVF / Split-RaBitQ
// index (RaBitQ-SSD §3): the first D_m bits of each 1-bit code plus three
// factors live in RAM in FastScan batches of 32; the rest of the code, the
// ex-code and two re-ranking factors form a fixed-size SSD record.
//
// Notation: d input dim, D' = PaddedDim(d) (multiple of 64), D_m = prefix dim
// (multiple of 64, 64 <= D_m <= D'), ex = B - 1 extra bits (0..8). All
// integers and floats are little-endian; floats are IEEE binary32.
//
// 1-bit code ("canonical", RabitqCode::bits): D'/8 bytes; coordinate i is bit
// (7 - i % 8) of byte i / 8 (MSB-first), set when the rotated residual's
// coordinate is > 0. The prefix is bytes [0, D_m/8), the suffix bytes
// [D_m/8, D'/8).
//
// RAM batch block (RamBatchBytes = 4 D_m + 384 bytes), 32 vectors (slots):
//   [0, 4 D_m)          interleaved prefix codes: for each code byte column
//                       p in [0, D_m/8) (coordinates 8p..8p+7), 32 bytes at
//                       offset 32p:
//                         [0, 16)  table 2p   = high nibble of code byte p
//                                  (coordinates 8p..8p+3, 8p at nibble bit 3)
//                         [16, 32) table 2p+1 = low nibble of code byte p
//                       and within each 16 bytes, byte m holds the nibble of
//                       slot pi(m) in its low half and of slot pi(m) + 16 in
//                       its high half, pi(m) = m/2 (m even), 8 + m/2 (m odd),
//                       i.e. pi = [0, 8, 1, 9, ..., 7, 15] (this order lets
//                       the SIMD kernels split 16-bit lanes into slots 0-7
//                       and 8-15 without a shuffle).
//   [4 D_m, +128)       f32 f_add[32]
//   [4 D_m + 128, +128) f32 f_rescale[32]
//   [4 D_m + 256, +128) f32 f_error[32]
// Unused slots of a short final batch are all-zero (code and factors), which
// FastScan reads harmlessly (estimate = g_add); the caller must ignore them.
//
// SSD record (SsdRecordBytes = (D' - D_m)/8 + D' ex/8 + 8 bytes):
//   [0, S)              suffix of the 1-bit code, S = (D' - D_m)/8 bytes,
//                       canonical bytes [D_m/8, D'/8) verbatim
//   [S, S + E)          packed ex-code, E = D' ex / 8 bytes (ex_code.h)
//   [S + E, +4)         f32 f_add_ex
//   [S + E + 4, +4)     f32 f_rescale_ex
// Every field size is a multiple of 8 bytes, so 8-byte-aligned records keep
// their fields 8-byte aligned. B = 1 with D_m = D' gives an 8-byte record (the
// full-code 1-bit factors); B = 1 with D_m < D' is allowed (refinement then
// restores the full 1-bit estimate from the suffix).
//
// Listed code (ListedCodeBytes = 12 + D'/8 + (D' - D_m)/8 bytes), an optional
// RAM tier for searches that estimate a listed set of rows one by one (the
// exact fallback of filtered search): a 2-bit extended RaBitQ code of its own
// (ex = 1, its scale chosen for this width, not truncated from the SSD ex-code)
//   [0, 12)             f32 f_add_2, f_rescale_2, f_error_2
//   [12, 12 + D'/8)     packed 1-bit ex-code (ex_code.h, ex = 1)
//   [12 + D'/8, end)    suffix of the 1-bit code (its prefix is in the RAM
//                       block), canonical bytes [D_m/8, D'/8) verbatim
//
// Thread-safety: all functions are pure; distinct outputs may be written from
// distinct threads.
#ifndef STRATA_QUANT_RABITQ_LAYOUT_H_
#define STRATA_QUANT_RABITQ_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace strata::quant::rabitq {

// Vectors per FastScan batch.
inline constexpr std::size_t kBatchSize = 32;

// Sizes derived from (D', D_m, ex). Construct through
// RabitqQuantizer::layout() or fill the three fields directly (tests).
struct RabitqLayout {
  std::size_t padded_dim = 0;  // D', multiple of 64
  std::size_t prefix_dim = 0;  // D_m, multiple of 64, 64 <= D_m <= D'
  int ex_bits = 0;             // B - 1, 0..8

  std::size_t code_bytes() const { return padded_dim / 8; }
  std::size_t prefix_code_bytes() const { return prefix_dim / 8; }
  std::size_t suffix_code_bytes() const { return (padded_dim - prefix_dim) / 8; }
  std::size_t ex_code_bytes() const { return padded_dim * static_cast<std::size_t>(ex_bits) / 8; }
  // FastScan tables of 4 coordinates over the prefix.
  std::size_t num_tables() const { return prefix_dim / 4; }
  std::size_t ram_codes_bytes() const { return prefix_dim * 4; }
  std::size_t ram_batch_bytes() const { return ram_codes_bytes() + 3 * kBatchSize * 4; }
  std::size_t ssd_record_bytes() const { return suffix_code_bytes() + ex_code_bytes() + 8; }
  std::size_t listed_code_bytes() const { return 12 + padded_dim / 8 + suffix_code_bytes(); }
};

// One encoded vector (all parts, unpacked). Reusable: Encode resizes the
// vectors once and then writes in place.
struct RabitqCode {
  std::vector<std::uint8_t> bits;     // D'/8 bytes, canonical 1-bit code
  std::vector<std::uint8_t> ex_code;  // D' ex/8 bytes, packed (empty for B = 1)
  // In-RAM factors of the prefix estimator (see quantizer.h for formulas).
  float f_add = 0.0f;
  float f_rescale = 0.0f;
  float f_error = 0.0f;
  // Re-ranking factors of the full B-bit estimator.
  float f_add_ex = 0.0f;
  float f_rescale_ex = 0.0f;
};

// Packs up to kBatchSize codes (codes.size() <= 32; codes[s] goes to slot s;
// a null pointer leaves its slot empty) into one RAM batch block of
// layout.ram_batch_bytes() bytes at `block` (fully overwritten). Each code
// must have layout.code_bytes() bits.
void PackRamBatch(const RabitqLayout& layout, std::span<const RabitqCode* const> codes,
                  std::uint8_t* block);

// Reads back slot `slot` of a RAM batch block: the D_m/8 canonical prefix
// bytes into `prefix_bits`, and the three factors (any pointer may be null).
void UnpackRamBatchSlot(const RabitqLayout& layout, const std::uint8_t* block, std::size_t slot,
                        std::uint8_t* prefix_bits, float* f_add, float* f_rescale, float* f_error);

// Writes the SSD record of `code` (layout.ssd_record_bytes() bytes).
void WriteSsdRecord(const RabitqLayout& layout, const RabitqCode& code, std::uint8_t* record);

// Field views into an SSD record (no copy). The record must outlive the view.
struct SsdRecordView {
  const std::uint8_t* suffix_bits = nullptr;  // (D' - D_m)/8 canonical bytes
  const std::uint8_t* ex_code = nullptr;      // D' ex/8 bytes (packed)
  float f_add_ex = 0.0f;
  float f_rescale_ex = 0.0f;
};
SsdRecordView ReadSsdRecord(const RabitqLayout& layout, const std::uint8_t* record);

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_LAYOUT_H_
