// Little-endian append/consume helpers for the IVF blobs (coarse quantizer,
// per-cluster tables). Bounds-checked reads: a short or damaged blob gives
// Corruption, never a read past the end.
#ifndef STRATA_IVF_BYTE_IO_H_
#define STRATA_IVF_BYTE_IO_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "strata/status.h"

namespace strata::ivf {

// Appends trivially copyable values / arrays (host order = little-endian on
// every supported target; checked by a static_assert in byte_io users).
class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>* out) : out_(out) {}
  template <typename T>
  void Put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const std::size_t at = out_->size();
    out_->resize(at + sizeof(T));
    std::memcpy(out_->data() + at, &v, sizeof(T));
  }
  template <typename T>
  void PutArray(std::span<const T> a) {
    Put<std::uint64_t>(a.size());
    const std::size_t at = out_->size();
    out_->resize(at + a.size_bytes());
    if (!a.empty()) std::memcpy(out_->data() + at, a.data(), a.size_bytes());
  }

 private:
  std::vector<std::uint8_t>* out_;
};

// Consumes what ByteWriter wrote. Every Get returns false once the input is
// exhausted or an array length is implausible; the caller turns that into
// Corruption.
class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> in) : in_(in) {}
  template <typename T>
  bool Get(T* v) {
    if (in_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(v, in_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  template <typename T>
  bool GetArray(std::vector<T>* a) {
    std::uint64_t n = 0;
    if (!Get(&n) || n > (in_.size() - pos_) / sizeof(T)) return false;
    a->resize(n);
    std::memcpy(a->data(), in_.data() + pos_, n * sizeof(T));
    pos_ += n * sizeof(T);
    return true;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
};

}  // namespace strata::ivf

#endif  // STRATA_IVF_BYTE_IO_H_
