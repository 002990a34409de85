// Distances between vectors, for tools, bindings and anyone outside src/.
//
// Every distance here is "smaller is nearer", so any index ranks by ascending
// value:
//   Metric::kL2           squared Euclidean distance  sum (a_i - b_i)^2
//   Metric::kInnerProduct -<a, b>
//   Metric::kCosine       1 - <a, b> / (|a| |b|), in [0, 2]
// Cosine is always the exact cosine computed from the dot product and both
// norms, for every element type (exact integer sums for uint8/int8); it never
// assumes the data is normalised and never silently switches to L2 (a trap of
// indexes that normalise at build time and forget the queries or inserts).
// A zero vector has no direction: its cosine distance to any vector,
// including itself and another zero vector, is defined as 1 (orthogonal).
// Callers that want to reject zero vectors under cosine can use
// NormalizeRows, which counts them.
//
// Vectors are `dim` contiguous elements of an ElementType (strata/types.h):
// float32, float16 / bfloat16 (IEEE binary16 / bfloat16 bit patterns stored
// as uint16_t, computed in float32), uint8 or int8 (summed exactly in
// integers). Pointers need no particular alignment.
//
// The kernels are SIMD (AVX2 or AVX-512) when the CPU supports it, chosen
// once per process; ActiveIsaName() says which. The environment variable
// STRATA_ISA=scalar|avx2|avx512 caps the choice (read once, before the first
// distance is computed).
#ifndef STRATA_DISTANCE_H_
#define STRATA_DISTANCE_H_

#include <cstddef>
#include <string_view>

#include "strata/result.h"
#include "strata/types.h"

namespace strata {

// A distance function for one (metric, element type, dim), resolved once by
// MakeDistance so that each call is a single indirect call into the chosen
// SIMD kernel. Cheap to copy (a few words); immutable, so one object may be
// used from any number of threads at once. It does not own or retain the
// vectors passed to it.
class DistanceComputer {
 public:
  // An empty computer (valid() == false); calling it is a programmer error.
  // Exists so that holders can be default-constructed and assigned later.
  DistanceComputer() = default;

  // True for objects returned by MakeDistance.
  bool valid() const { return fn_ != nullptr; }

  // Distance between `a` and `b`, each dim() elements of element_type().
  // Never fails; NaN/Inf elements propagate into the result.
  float operator()(const void* a, const void* b) const { return fn_(a, b, dim_); }

  // out[i] = (*this)(query, rows + i * vector_bytes()) for i in [0, n):
  // `rows` holds n vectors back to back (size n * dim elements), `out` has
  // room for n floats. For brute-force scans and reranking.
  void ComputeMany(const void* query, const void* rows, std::size_t n, float* out) const;

  Metric metric() const { return metric_; }
  ElementType element_type() const { return type_; }
  std::size_t dim() const { return dim_; }
  // Bytes per vector: dim() * ElementSize(element_type()).
  std::size_t vector_bytes() const { return vector_bytes_; }
  // The instruction set of the resolved kernel: "scalar", "avx2" or "avx512".
  std::string_view isa_name() const { return isa_name_; }

 private:
  using Fn = float (*)(const void* a, const void* b, std::size_t dim);
  friend Result<DistanceComputer> MakeDistance(Metric metric, ElementType type, std::size_t dim);

  Fn fn_ = nullptr;
  std::size_t dim_ = 0;
  std::size_t vector_bytes_ = 0;
  Metric metric_ = Metric::kL2;
  ElementType type_ = ElementType::kFloat32;
  std::string_view isa_name_;
};

// Resolves the distance for `metric` over vectors of `dim` elements of
// `type`, using the best kernels this CPU supports (see ActiveIsaName).
// Fails with InvalidArgument for dim == 0, for dim * element size overflowing
// size_t, or for a metric / type value outside its enum (e.g. a corrupt byte).
Result<DistanceComputer> MakeDistance(Metric metric, ElementType type, std::size_t dim);

// One-off distance between `a` and `b` (dim elements of `type` each); same
// value as MakeDistance(metric, type, dim)(a, b). Fails with InvalidArgument
// as MakeDistance does, or when a or b is null. Prefer MakeDistance in loops.
Result<float> ComputeDistance(Metric metric, ElementType type, const void* a, const void* b,
                              std::size_t dim);

// The instruction set the distance kernels use in this process: "scalar",
// "avx2" or "avx512" (for `strata info` and benchmark reports).
std::string_view ActiveIsaName();

// Scales each of the n float32 rows of `rows` (size n * dim, row-major) in
// place to unit L2 norm, e.g. at ingest for a cosine index that wants to rank
// by inner product. Norms are accumulated in float32 and recomputed in double
// when that overflows or underflows, so every finite nonzero row is
// normalised. Zero rows are left unchanged (their cosine distance stays 1)
// and counted: returns the number of zero rows. Fails with InvalidArgument
// for dim == 0, a null `rows` with n > 0, or a row containing NaN or Inf (the
// message names the row; rows before it have already been normalised, the
// offending row and those after it are untouched).
Result<std::size_t> NormalizeRows(float* rows, std::size_t n, std::size_t dim);

}  // namespace strata

#endif  // STRATA_DISTANCE_H_
