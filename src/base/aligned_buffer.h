// AlignedBuffer: an owned, zero-initialised byte buffer with a chosen alignment.
//
// O_DIRECT I/O needs buffers aligned to the logical block size (4 KiB here);
// SIMD kernels want 64-byte alignment. Move-only.
#ifndef STRATA_BASE_ALIGNED_BUFFER_H_
#define STRATA_BASE_ALIGNED_BUFFER_H_

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

namespace strata {

inline constexpr std::size_t kSectorSize = 4096;  // I/O unit and on-disk page size
inline constexpr std::size_t kCacheLine = 64;

// Rounds `n` up to a multiple of `align` (a power of two).
constexpr std::size_t AlignUp(std::size_t n, std::size_t align) {
  return (n + align - 1) & ~(align - 1);
}
constexpr bool IsAligned(std::size_t n, std::size_t align) { return (n & (align - 1)) == 0; }

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  // Allocates `size` bytes (rounded up to `alignment`), zero-filled. On
  // allocation failure the buffer is empty (data() == nullptr).
  explicit AlignedBuffer(std::size_t size, std::size_t alignment = kSectorSize) {
    Reset(size, alignment);
  }

  void Reset(std::size_t size, std::size_t alignment = kSectorSize) {
    data_.reset();
    size_ = 0;
    if (size == 0) return;
    const std::size_t rounded = AlignUp(size, alignment);
    void* p = std::aligned_alloc(alignment, rounded);
    if (p == nullptr) return;
    std::memset(p, 0, rounded);
    data_.reset(static_cast<std::byte*>(p));
    size_ = size;
  }

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data_.get());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(data_.get());
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  struct Free {
    void operator()(std::byte* p) const { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t size_ = 0;
};

}  // namespace strata

#endif  // STRATA_BASE_ALIGNED_BUFFER_H_
