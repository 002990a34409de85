#include <gtest/gtest.h>

#include <set>

#include "strata/io.h"

namespace strata {
namespace {

TEST(BufferPool, RejectsBadShapes) {
  EXPECT_TRUE(BufferPool::Create(0, 4096).status().IsInvalidArgument());
  EXPECT_TRUE(BufferPool::Create(4, 0).status().IsInvalidArgument());
  EXPECT_TRUE(BufferPool::Create(4, 1000).status().IsInvalidArgument());
  EXPECT_TRUE(BufferPool::Create(1u << 20, std::size_t{1} << 30).status().IsInvalidArgument());
}

TEST(BufferPool, HandsOutDistinctAlignedBuffersUntilExhausted) {
  Result<BufferPool> pool = BufferPool::Create(8, 2 * kIoAlignment);
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->count(), 8u);
  EXPECT_EQ(pool->buffer_size(), 2 * kIoAlignment);
  EXPECT_EQ(pool->region().size(), 16 * kIoAlignment);
  std::set<std::byte*> seen;
  for (int i = 0; i < 8; ++i) {
    std::byte* b = pool->Acquire();
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b) % kIoAlignment, 0u);
    EXPECT_GE(b, pool->region().data());
    EXPECT_LE(b + pool->buffer_size(), pool->region().data() + pool->region().size());
    EXPECT_TRUE(seen.insert(b).second);
  }
  EXPECT_EQ(pool->available(), 0u);
  EXPECT_EQ(pool->Acquire(), nullptr);
  std::byte* first = *seen.begin();
  ASSERT_TRUE(pool->Release(first).ok());
  EXPECT_EQ(pool->available(), 1u);
  EXPECT_EQ(pool->Acquire(), first);  // recycled, not reallocated
}

TEST(BufferPool, ReleaseRejectsForeignAndDoubleRelease) {
  Result<BufferPool> pool = BufferPool::Create(2, kIoAlignment);
  ASSERT_TRUE(pool.ok());
  std::byte* b = pool->Acquire();
  EXPECT_TRUE(pool->Release(b + 1).IsInvalidArgument());
  std::byte local[8];
  EXPECT_TRUE(pool->Release(local).IsInvalidArgument());
  EXPECT_TRUE(pool->Release(nullptr).IsInvalidArgument());
  EXPECT_TRUE(pool->Release(pool->buffer(1)).IsInvalidArgument());  // never acquired
  ASSERT_TRUE(pool->Release(b).ok());
  EXPECT_TRUE(pool->Release(b).IsInvalidArgument());
  EXPECT_EQ(pool->available(), 2u);
}

TEST(BufferPool, MovedPoolKeepsItsBuffers) {
  Result<BufferPool> pool = BufferPool::Create(2, kIoAlignment);
  ASSERT_TRUE(pool.ok());
  std::byte* b = pool->Acquire();
  b[0] = std::byte{7};
  BufferPool moved = std::move(*pool);
  EXPECT_EQ(moved.buffer(0), b);
  EXPECT_EQ(b[0], std::byte{7});
  EXPECT_TRUE(moved.Release(b).ok());
}

}  // namespace
}  // namespace strata
