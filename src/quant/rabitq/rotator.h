// Random orthogonal rotations for RaBitQ.
//
// RaBitQ (Gao & Long, SIGMOD 2024) quantises a vector by the signs of its
// coordinates after a random orthogonal rotation P; the rotation makes the
// coordinates exchangeable, which is what the unbiased estimator and its error
// bound rest on. Data vectors, centroids and queries are all rotated by the
// same P, so the rotation is part of a stored index and is serialised with it.
//
// Two kinds are provided:
//   kDense   P is a Haar-distributed D' x D' matrix: the Q factor of the QR
//            decomposition of a standard Gaussian matrix, with the columns'
//            signs fixed by sign(diag R) (LAPACK dgeqrf/dorgqr from OpenBLAS,
//            in double, stored as float). Exact Haar distribution; O(D'^2) per
//            vector and D'^2 floats of state.
//   kFhtKac  a structured "randomised Hadamard" rotation in the style of the
//            RaBitQ library's FHT-Kac rotator: FhtRounds(D') rounds of
//            (random sign flip of all D' coordinates, normalised fast
//            Walsh-Hadamard transform on a power-of-two block of T = the
//            largest power of two <= D' coordinates, then, when D' != T, a
//            normalised Kac butterfly (x_i, x_{i+D'/2}) ->
//            ((x_i + x_{i+D'/2})/sqrt2, (x_i - x_{i+D'/2})/sqrt2)). The block
//            is the first T coordinates in even rounds and the last T in odd
//            rounds, so every coordinate is mixed when D' is not a power of
//            two. Orthogonal, O(D' log D') per vector, rounds * D' sign bits of
//            state. Rounds: 4 when D' is a power of two, 6 otherwise: with 4,
//            the Kac variant mixes very sparse inputs poorly (2-sparse
//            vectors: 1-bit estimator error 12 % above Haar at D' = 768, 33 %
//            at 1536; with 6 it matches Haar within 1 %, see
//            estimator_test.cc and bench/results/quant_rabitq.md).
//
// Padding: every rotator works in D' = PaddedDim(d) = d rounded up to a
// multiple of 64; an input of d floats is zero-padded to D' before the
// rotation. (64 keeps the 1-bit code a whole number of u64 words and the
// FastScan tables a whole number of 32-byte register loads; the FHT needs no
// further padding because the Kac butterfly handles non-powers of two, e.g.
// D' = 768 = 512 + 256, 1536 = 1024 + 512.)
//
// Thread-safety: a constructed Rotator is immutable; all const methods may be
// called concurrently.
#ifndef STRATA_QUANT_RABITQ_ROTATOR_H_
#define STRATA_QUANT_RABITQ_ROTATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "strata/result.h"
#include "strata/status.h"

namespace strata::quant::rabitq {

// Serialised as one byte; values are part of the rotator blob format.
enum class RotatorKind : std::uint8_t {
  kDense = 0,
  kFhtKac = 1,
};

// "dense" / "fht".
std::string_view RotatorKindName(RotatorKind kind);
// Accepts the names above; InvalidArgument otherwise.
Result<RotatorKind> ParseRotatorKind(std::string_view name);

// D' for an input dimension d: d rounded up to a multiple of 64 (0 for 0).
constexpr std::size_t PaddedDim(std::size_t dim) { return (dim + 63) / 64 * 64; }

// Rounds of the kFhtKac transform for padded dimension D' (see above).
constexpr int FhtRounds(std::size_t padded_dim) {
  return (padded_dim & (padded_dim - 1)) == 0 ? 4 : 6;
}
// Largest dimension a rotator accepts (the dense matrix alone would be 4 GiB
// at 32768; the FHT has no such cost but D' is capped for both so that sizes
// in the blob and the codes stay far from any overflow).
inline constexpr std::size_t kMaxRotatorDim = 1 << 16;

// Rotator blob (all integers little-endian), written by Serialize:
//   [0, 4)    u32 magic 0x54524252 ("RBRT")
//   [4, 6)    u16 format version (1)
//   [6, 7)    u8  RotatorKind
//   [7, 8)    u8  reserved, 0
//   [8, 16)   u64 dim d
//   [16, 24)  u64 padded dim D' (= PaddedDim(d))
//   [24, 32)  u64 seed it was generated from (informational)
//   [32, 40)  u64 body size in bytes
//   [40, 40+body) body:
//       kDense:  D' * D' float32, row-major matrix P (rotated = P * padded x)
//       kFhtKac: u32 rounds (FhtRounds(D')), u32 block size T, then rounds * D'/8 bytes of
//                sign bits: round k, coordinate i is bit (i % 8) of byte
//                k*D'/8 + i/8; a set bit negates the coordinate.
//   [40+body, 48+body) u64 Checksum64 (XXH3, seed 0) of bytes [0, 40+body)
inline constexpr std::uint32_t kRotatorMagic = 0x54524252u;
inline constexpr std::uint16_t kRotatorVersion = 1;

class Rotator {
 public:
  virtual ~Rotator() = default;
  Rotator(const Rotator&) = delete;
  Rotator& operator=(const Rotator&) = delete;

  // Builds a rotator of `kind` for input dimension `dim` (1..kMaxRotatorDim)
  // from `seed`; the same (kind, dim, seed) gives the same rotation on every
  // run. InvalidArgument for a bad dim. The dense kind costs O(D'^3) (about a
  // second at D' = 1536) and 8 D'^2 bytes of temporary memory.
  static Result<std::unique_ptr<Rotator>> Create(RotatorKind kind, std::size_t dim,
                                                 std::uint64_t seed);

  // Reads a blob written by Serialize. Corruption on a bad magic, checksum,
  // size or field; NotSupported on an unknown version or kind. The blob must
  // be exactly one rotator (trailing bytes are Corruption).
  static Result<std::unique_ptr<Rotator>> Deserialize(std::span<const std::uint8_t> blob);

  // Appends the blob described above to `out`.
  void Serialize(std::vector<std::uint8_t>* out) const;
  // Size in bytes of the blob Serialize writes.
  std::size_t SerializedSize() const;

  RotatorKind kind() const { return kind_; }
  std::size_t dim() const { return dim_; }
  std::size_t padded_dim() const { return padded_dim_; }
  std::uint64_t seed() const { return seed_; }

  // out = P * [in; 0]: `in` has dim() floats, `out` padded_dim() floats; they
  // must not overlap. No allocation.
  virtual void Rotate(const float* in, float* out) const = 0;

  // Rotates n row-major vectors: `in` is n * dim(), `out` n * padded_dim().
  // Same result as n calls of Rotate up to float rounding (the dense kind uses
  // one sgemm).
  virtual void RotateBatch(const float* in, std::size_t n, float* out) const;

  // The inverse: out = first dim() coordinates of P^T * in, where `in` has
  // padded_dim() floats and `out` dim() floats (non-overlapping). Inverse(
  // Rotate(x)) == x up to float rounding.
  virtual void InverseRotate(const float* in, float* out) const = 0;

 protected:
  Rotator(RotatorKind kind, std::size_t dim, std::uint64_t seed)
      : kind_(kind), dim_(dim), padded_dim_(PaddedDim(dim)), seed_(seed) {}

  // Kind-specific blob body (see the layout above).
  virtual std::size_t BodySize() const = 0;
  virtual void WriteBody(std::uint8_t* out) const = 0;

 private:
  RotatorKind kind_;
  std::size_t dim_;
  std::size_t padded_dim_;
  std::uint64_t seed_;
};

// Kind-specific factories and blob-body readers, defined in rotator_dense.cc
// and rotator_fht.cc (used by Rotator::Create / Deserialize).
Result<std::unique_ptr<Rotator>> CreateDenseRotator(std::size_t dim, std::uint64_t seed);
Result<std::unique_ptr<Rotator>> ReadDenseRotator(std::size_t dim, std::uint64_t seed,
                                                  std::span<const std::uint8_t> body);
Result<std::unique_ptr<Rotator>> CreateFhtRotator(std::size_t dim, std::uint64_t seed);
Result<std::unique_ptr<Rotator>> ReadFhtRotator(std::size_t dim, std::uint64_t seed,
                                                std::span<const std::uint8_t> body);

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_ROTATOR_H_
