// Packing of RaBitQ codes into the RAM batch blocks and SSD records
// documented in layout.h.
#include "quant/rabitq/layout.h"

#include <cstring>

#include "quant/rabitq/le_coding.h"

namespace strata::quant::rabitq {
namespace {

// Byte index m within a 16-byte table group that holds slot (s mod 16): the
// inverse of pi(m) = m/2 (m even), 8 + m/2 (m odd).
std::size_t ByteOfSlot(std::size_t s) {
  const std::size_t v = s % 16;
  return v < 8 ? 2 * v : 2 * (v - 8) + 1;
}

}  // namespace

void PackRamBatch(const RabitqLayout& layout, std::span<const RabitqCode* const> codes,
                  std::uint8_t* block) {
  std::memset(block, 0, layout.ram_batch_bytes());
  const std::size_t columns = layout.prefix_code_bytes();
  std::uint8_t* factors = block + layout.ram_codes_bytes();
  for (std::size_t s = 0; s < codes.size() && s < kBatchSize; ++s) {
    const RabitqCode* code = codes[s];
    if (code == nullptr) continue;
    const std::size_t m = ByteOfSlot(s);
    const int shift = s < 16 ? 0 : 4;
    for (std::size_t p = 0; p < columns; ++p) {
      const std::uint8_t byte = code->bits[p];
      block[32 * p + m] |= static_cast<std::uint8_t>((byte >> 4) << shift);
      block[32 * p + 16 + m] |= static_cast<std::uint8_t>((byte & 0x0F) << shift);
    }
    StoreLE<float>(factors + 4 * s, code->f_add);
    StoreLE<float>(factors + 128 + 4 * s, code->f_rescale);
    StoreLE<float>(factors + 256 + 4 * s, code->f_error);
  }
}

void UnpackRamBatchSlot(const RabitqLayout& layout, const std::uint8_t* block, std::size_t slot,
                        std::uint8_t* prefix_bits, float* f_add, float* f_rescale, float* f_error) {
  const std::size_t m = ByteOfSlot(slot);
  const int shift = slot < 16 ? 0 : 4;
  if (prefix_bits != nullptr) {
    for (std::size_t p = 0; p < layout.prefix_code_bytes(); ++p) {
      const unsigned hi = (block[32 * p + m] >> shift) & 0x0F;
      const unsigned lo = (block[32 * p + 16 + m] >> shift) & 0x0F;
      prefix_bits[p] = static_cast<std::uint8_t>((hi << 4) | lo);
    }
  }
  const std::uint8_t* factors = block + layout.ram_codes_bytes();
  if (f_add != nullptr) *f_add = LoadLE<float>(factors + 4 * slot);
  if (f_rescale != nullptr) *f_rescale = LoadLE<float>(factors + 128 + 4 * slot);
  if (f_error != nullptr) *f_error = LoadLE<float>(factors + 256 + 4 * slot);
}

void WriteSsdRecord(const RabitqLayout& layout, const RabitqCode& code, std::uint8_t* record) {
  const std::size_t suffix = layout.suffix_code_bytes();
  const std::size_t ex = layout.ex_code_bytes();
  if (suffix > 0) std::memcpy(record, code.bits.data() + layout.prefix_code_bytes(), suffix);
  if (ex > 0) std::memcpy(record + suffix, code.ex_code.data(), ex);
  StoreLE<float>(record + suffix + ex, code.f_add_ex);
  StoreLE<float>(record + suffix + ex + 4, code.f_rescale_ex);
}

SsdRecordView ReadSsdRecord(const RabitqLayout& layout, const std::uint8_t* record) {
  const std::size_t suffix = layout.suffix_code_bytes();
  const std::size_t ex = layout.ex_code_bytes();
  SsdRecordView view;
  view.suffix_bits = record;
  view.ex_code = record + suffix;
  view.f_add_ex = LoadLE<float>(record + suffix + ex);
  view.f_rescale_ex = LoadLE<float>(record + suffix + ex + 4);
  return view;
}

}  // namespace strata::quant::rabitq
