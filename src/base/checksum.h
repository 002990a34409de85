// Checksums for on-disk formats: XXH3-64 (Debian's libxxhash). Fast enough to
// verify every page and header we read; collisions are irrelevant at our scale.
#ifndef STRATA_BASE_CHECKSUM_H_
#define STRATA_BASE_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

namespace strata {

// 64-bit checksum of `size` bytes at `data`, seeded so that different record
// kinds can use different seeds.
std::uint64_t Checksum64(const void* data, std::size_t size, std::uint64_t seed = 0);

// Incremental form for data that arrives in pieces (streamed file writes).
class ChecksumStream {
 public:
  explicit ChecksumStream(std::uint64_t seed = 0);
  ~ChecksumStream();
  ChecksumStream(const ChecksumStream&) = delete;
  ChecksumStream& operator=(const ChecksumStream&) = delete;
  void Update(const void* data, std::size_t size);
  std::uint64_t Digest() const;

 private:
  void* state_;  // XXH3_state_t*, opaque to keep xxhash.h out of our headers
};

}  // namespace strata

#endif  // STRATA_BASE_CHECKSUM_H_
