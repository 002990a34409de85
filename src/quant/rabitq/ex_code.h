// Extended RaBitQ: the (B-1)-bit "ex-code" that refines the sign bit.
//
// Gao et al., "Practical and Asymptotically Optimal Quantization of
// High-Dimensional Vectors in Euclidean Space for ANN Search" (SIGMOD 2025).
// With ex = B - 1 extra bits, each coordinate of the rotated residual r is
// represented by the grid value sign(r_i) * (k_i + 1/2), k_i in [0, 2^ex - 1],
// where k = min(floor(t * a + 1e-5), 2^ex - 1) for a = |r| / ||r|| and a scale
// t chosen to maximise the cosine between a and (k + 1/2). The estimator is
// RaBitQ's with this grid vector in place of the sign vector, so its error
// shrinks by about 2^-ex.
//
// Packed ex-code layout (n a multiple of 8): coordinates in groups of 8; group
// g occupies the `ex` bytes [g*ex, (g+1)*ex), read as a little-endian integer
// in which coordinate 8g+j holds bits [j*ex, (j+1)*ex). For ex = 8 this is one
// byte per coordinate. The stored value is k'_i = k_i when r_i > 0 and
// 2^ex - 1 - k_i otherwise, so that (sign bit << ex) + k'_i is the B-bit code
// u_i and u_i - (2^B - 1)/2 = sign(r_i) (k_i + 1/2).
//
// All functions are pure and thread-safe.
#ifndef STRATA_QUANT_RABITQ_EX_CODE_H_
#define STRATA_QUANT_RABITQ_EX_CODE_H_

#include <cstddef>
#include <cstdint>

namespace strata::quant::rabitq {

// How the scale t of the ex-code is chosen. Serialised as one byte.
enum class ExCodeSearch : std::uint8_t {
  // Per vector: a sweep over every t in [t_start, t_end] at which some k_i
  // changes, keeping the best cosine. t_end saturates the largest
  // coordinate; t_start is a fixed fraction of t_end per ex, well below where
  // the optimum lies for rotated residuals (ex_code.cc). About 13 D' events
  // at ex = 8 (~240 us per vector at D' = 768), 3 D' at ex = 2.
  kExact = 0,
  // t = f * t_end(a) with one constant f per (D', ex): the mean of
  // best t / t_end over 100 random Gaussian vectors, computed once when the
  // quantizer is created. O(D') per vector; 1 - cosine is on average 5-20 %
  // above kExact's, which moves the estimator's RMS error by < 2 % (measured
  // at D' = 768, B = 3..9). (Scaling with t_end = (2^ex + 9) / max_i a_i matters: the
  // RaBitQ library's constant-t mode saturates vectors with a large maximum
  // coordinate and loses 5-50x in 1 - cosine at ex = 8.)
  kFast = 1,
};

// Largest supported ex (B = 9).
inline constexpr int kMaxExBits = 8;

// The t in [t_start, t_end] maximising cos(a, k(t) + 1/2), found by sweeping
// the increments of k in increasing t. `a` holds n >= 1 non-negative values
// (|r_i| / ||r||; any positive scaling of a gives the same k), ex_bits in
// [1, kMaxExBits]. Returns 0 if a is all zero.
double ExCodeBestScale(const float* a, std::size_t n, int ex_bits);

// The cosine between a and k(t) + 1/2 (the objective ExCodeBestScale
// maximises); for tests and diagnostics.
double ExCodeObjective(const float* a, std::size_t n, int ex_bits, double t);

// t_end(a) = (2^ex_bits + 9) / max_i a_i, the end of the sweep (the largest
// coordinate is saturated well before it); 0 if a is all zero.
double ExCodeScaleEnd(const float* a, std::size_t n, int ex_bits);

// The constant f of ExCodeSearch::kFast for dimension n and ex_bits: mean of
// ExCodeBestScale / ExCodeScaleEnd over 100 standard Gaussian vectors drawn
// from `seed`. Deterministic.
double ExCodeFastFraction(std::size_t n, int ex_bits, std::uint64_t seed);

// k_i = min(floor(t * a_i + 1e-5), 2^ex - 1) for i < n, written to k (n bytes).
void ExCodeQuantize(const float* a, std::size_t n, int ex_bits, double t, std::uint8_t* k);

// Packs n values (each < 2^ex_bits; n a multiple of 8) into n * ex_bits / 8
// bytes at `out` (layout above).
void PackExCode(const std::uint8_t* values, std::size_t n, int ex_bits, std::uint8_t* out);
// The inverse of PackExCode.
void UnpackExCode(const std::uint8_t* packed, std::size_t n, int ex_bits, std::uint8_t* values);

// sum_i value_i * q_i over a packed ex-code of n coordinates (n a multiple of
// 8), accumulated in float in coordinate order within groups of 8.
float ExCodeDot(const std::uint8_t* packed, const float* q, std::size_t n, int ex_bits);

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_EX_CODE_H_
