// BufferPool: fixed aligned buffers from one allocation, recycled through a
// free stack so the search path never allocates.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "strata/io.h"

namespace strata {

void BufferPool::FreeDeleter::operator()(std::byte* p) const { std::free(p); }

Result<BufferPool> BufferPool::Create(std::size_t count, std::size_t buffer_size) {
  if (count == 0 || count > (std::size_t{1} << 24)) {
    return Status::InvalidArgument(
        fmt::format("BufferPool: count must be in 1..2^24, got {}", count));
  }
  if (buffer_size == 0 || buffer_size % kIoAlignment != 0) {
    return Status::InvalidArgument(
        fmt::format("BufferPool: buffer_size must be a positive multiple of {}, got {}",
                    kIoAlignment, buffer_size));
  }
  if (buffer_size > (std::size_t{1} << 40) / count) {
    return Status::InvalidArgument(
        fmt::format("BufferPool: {} buffers of {} bytes is too large", count, buffer_size));
  }
  const std::size_t bytes = count * buffer_size;
  void* p = std::aligned_alloc(kIoAlignment, bytes);
  if (p == nullptr) {
    return Status::IOError(fmt::format("BufferPool: cannot allocate {} bytes", bytes));
  }
  // Touch every page now: the first reads should not pay for page faults, and
  // registration with io_uring pins the pages anyway.
  std::memset(p, 0, bytes);
  BufferPool pool;
  pool.memory_.reset(static_cast<std::byte*>(p));
  pool.count_ = count;
  pool.buffer_size_ = buffer_size;
  pool.free_.reserve(count);
  // Stack order hands out buffer 0 first (lowest addresses first).
  for (std::size_t i = count; i > 0; --i) pool.free_.push_back(static_cast<std::uint32_t>(i - 1));
  pool.in_use_.assign(count, 0);
  return pool;
}

std::byte* BufferPool::Acquire() {
  if (free_.empty()) return nullptr;
  const std::uint32_t i = free_.back();
  free_.pop_back();
  in_use_[i] = 1;
  return buffer(i);
}

Status BufferPool::Release(std::byte* buf) {
  const std::byte* begin = memory_.get();
  if (buf == nullptr || begin == nullptr || buf < begin || buf >= begin + count_ * buffer_size_ ||
      static_cast<std::size_t>(buf - begin) % buffer_size_ != 0) {
    return Status::InvalidArgument(fmt::format(
        "BufferPool::Release: {} is not a buffer of this pool", static_cast<const void*>(buf)));
  }
  const auto i = static_cast<std::uint32_t>(static_cast<std::size_t>(buf - begin) / buffer_size_);
  if (in_use_[i] == 0) {
    return Status::InvalidArgument(
        fmt::format("BufferPool::Release: buffer {} is not acquired", i));
  }
  in_use_[i] = 0;
  free_.push_back(i);
  return Status::OK();
}

}  // namespace strata
