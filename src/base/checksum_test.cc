#include "base/checksum.h"

#include <string>

#include <gtest/gtest.h>

#include "base/aligned_buffer.h"

namespace strata {
namespace {

TEST(Checksum, StreamEqualsOneShotAndDetectsChange) {
  std::string data(10000, 'a');
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 31);
  const std::uint64_t whole = Checksum64(data.data(), data.size());
  ChecksumStream s;
  s.Update(data.data(), 1234);
  s.Update(data.data() + 1234, data.size() - 1234);
  EXPECT_EQ(s.Digest(), whole);
  data[5000] ^= 1;
  EXPECT_NE(Checksum64(data.data(), data.size()), whole);
  EXPECT_NE(Checksum64(data.data(), data.size(), 1), Checksum64(data.data(), data.size(), 2));
}

TEST(AlignedBuffer, IsAlignedAndZeroed) {
  AlignedBuffer b(10000);
  ASSERT_NE(b.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % kSectorSize, 0u);
  for (std::size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b.data()[i], std::byte{0});
  EXPECT_EQ(AlignUp(4097, 4096), 8192u);
}

}  // namespace
}  // namespace strata
