#include "quant/rabitq/layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "quant/rabitq/le_coding.h"
#include "base/random.h"

namespace strata::quant::rabitq {
namespace {

RabitqCode RandomCode(Xoshiro256& rng, const RabitqLayout& layout) {
  RabitqCode code;
  code.bits.resize(layout.code_bytes());
  code.ex_code.resize(layout.ex_code_bytes());
  for (auto& b : code.bits) b = static_cast<std::uint8_t>(rng.Next());
  for (auto& b : code.ex_code) b = static_cast<std::uint8_t>(rng.Next());
  code.f_add = static_cast<float>(rng.Normal());
  code.f_rescale = static_cast<float>(rng.Normal());
  code.f_error = static_cast<float>(rng.Uniform());
  code.f_add_ex = static_cast<float>(rng.Normal());
  code.f_rescale_ex = static_cast<float>(rng.Normal());
  return code;
}

TEST(RabitqLayout, Sizes) {
  // RaBitQ-SSD's example: D' = 128, D_m = 64, B = 9 -> 8 + 128 + 8 = 144 bytes.
  const RabitqLayout split{.padded_dim = 128, .prefix_dim = 64, .ex_bits = 8};
  EXPECT_EQ(split.ssd_record_bytes(), 144u);
  EXPECT_EQ(split.ram_batch_bytes(), 4u * 64 + 384);
  EXPECT_EQ(split.num_tables(), 16u);
  const RabitqLayout full1{.padded_dim = 768, .prefix_dim = 768, .ex_bits = 0};
  EXPECT_EQ(full1.ssd_record_bytes(), 8u);
  EXPECT_EQ(full1.ram_batch_bytes(), 4u * 768 + 384);
  const RabitqLayout ex3{.padded_dim = 768, .prefix_dim = 256, .ex_bits = 3};
  EXPECT_EQ(ex3.ssd_record_bytes(), 64u + 288u + 8u);
}

TEST(RabitqLayout, RamBatchBytesAreWhereDocumented) {
  const RabitqLayout layout{.padded_dim = 64, .prefix_dim = 64, .ex_bits = 0};
  std::vector<RabitqCode> codes(32);
  for (std::size_t s = 0; s < 32; ++s) {
    codes[s].bits.assign(8, 0);
    codes[s].f_add = static_cast<float>(s);
    codes[s].f_rescale = static_cast<float>(100 + s);
    codes[s].f_error = static_cast<float>(200 + s);
  }
  codes[0].bits[0] = 0xA5;   // table 0 nibble 0xA, table 1 nibble 0x5
  codes[8].bits[0] = 0x3C;   // slot 8 -> byte 1, low half
  codes[16].bits[0] = 0x96;  // slot 16 -> byte 0, high half
  codes[25].bits[7] = 0xE1;  // slot 25 = 16 + 9 -> byte 3, high half; column 7
  std::vector<const RabitqCode*> pointers;
  for (auto& c : codes) pointers.push_back(&c);
  std::vector<std::uint8_t> block(layout.ram_batch_bytes(), 0xCC);
  PackRamBatch(layout, pointers, block.data());
  EXPECT_EQ(block[0], 0x9A);   // slot 16's table-0 nibble 9 high, slot 0's 0xA low
  EXPECT_EQ(block[16], 0x65);  // table 1: slot 16 -> 6, slot 0 -> 5
  EXPECT_EQ(block[1], 0x03);   // slot 8's table-0 nibble
  EXPECT_EQ(block[17], 0x0C);  // slot 8's table-1 nibble
  EXPECT_EQ(block[32 * 7 + 3], 0xE0);
  EXPECT_EQ(block[32 * 7 + 16 + 3], 0x10);
  EXPECT_EQ(block[2], 0x00);
  EXPECT_EQ(LoadLE<float>(block.data() + 256 + 4 * 5), 5.0f);
  EXPECT_EQ(LoadLE<float>(block.data() + 256 + 128 + 4 * 31), 131.0f);
  EXPECT_EQ(LoadLE<float>(block.data() + 256 + 256 + 4 * 7), 207.0f);
}

TEST(RabitqLayout, RamBatchRoundTripAndEmptySlots) {
  Xoshiro256 rng(1);
  const RabitqLayout layout{.padded_dim = 256, .prefix_dim = 192, .ex_bits = 2};
  std::vector<RabitqCode> codes;
  for (int s = 0; s < 32; ++s) codes.push_back(RandomCode(rng, layout));
  std::vector<const RabitqCode*> pointers;
  for (int s = 0; s < 20; ++s) pointers.push_back(s == 7 ? nullptr : &codes[s]);
  std::vector<std::uint8_t> block(layout.ram_batch_bytes(), 0xEE);
  PackRamBatch(layout, pointers, block.data());
  for (std::size_t s = 0; s < 32; ++s) {
    std::vector<std::uint8_t> prefix(layout.prefix_code_bytes());
    float f_add, f_rescale, f_error;
    UnpackRamBatchSlot(layout, block.data(), s, prefix.data(), &f_add, &f_rescale, &f_error);
    if (s < 20 && s != 7) {
      EXPECT_EQ(0, std::memcmp(prefix.data(), codes[s].bits.data(), prefix.size())) << s;
      EXPECT_EQ(f_add, codes[s].f_add);
      EXPECT_EQ(f_rescale, codes[s].f_rescale);
      EXPECT_EQ(f_error, codes[s].f_error);
    } else {
      for (auto b : prefix) EXPECT_EQ(b, 0) << s;
      EXPECT_EQ(f_add, 0.0f);
      EXPECT_EQ(f_rescale, 0.0f);
      EXPECT_EQ(f_error, 0.0f);
    }
  }
}

TEST(RabitqLayout, SsdRecordLayoutAndRoundTrip) {
  Xoshiro256 rng(2);
  const RabitqLayout layout{.padded_dim = 256, .prefix_dim = 128, .ex_bits = 3};
  const RabitqCode code = RandomCode(rng, layout);
  std::vector<std::uint8_t> record(layout.ssd_record_bytes());
  ASSERT_EQ(record.size(), 16u + 96u + 8u);
  WriteSsdRecord(layout, code, record.data());
  EXPECT_EQ(0, std::memcmp(record.data(), code.bits.data() + 16, 16));
  EXPECT_EQ(0, std::memcmp(record.data() + 16, code.ex_code.data(), 96));
  EXPECT_EQ(LoadLE<float>(record.data() + 112), code.f_add_ex);
  EXPECT_EQ(LoadLE<float>(record.data() + 116), code.f_rescale_ex);
  const SsdRecordView view = ReadSsdRecord(layout, record.data());
  EXPECT_EQ(view.suffix_bits, record.data());
  EXPECT_EQ(view.ex_code, record.data() + 16);
  EXPECT_EQ(view.f_add_ex, code.f_add_ex);
  EXPECT_EQ(view.f_rescale_ex, code.f_rescale_ex);
}

}  // namespace
}  // namespace strata::quant::rabitq
