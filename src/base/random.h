// Deterministic random numbers shared by every module (data generation,
// k-means and PQ sampling, RaBitQ rotations, graph builds).
//
// Stored indexes and generated data must be reproducible from a seed on any
// platform, so nothing here uses the implementation-defined std::
// distributions: the generator is xoshiro256** (Blackman & Vigna) seeded
// through SplitMix64, normals come from Box-Muller in double.
#ifndef STRATA_BASE_RANDOM_H_
#define STRATA_BASE_RANDOM_H_

#include <cmath>
#include <cstdint>

namespace strata {

// The SplitMix64 output function: a bijection on 64-bit values with good
// avalanche, used to derive seeds.
inline std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// SplitMix64 step: returns the next output and advances `state`.
inline std::uint64_t SplitMix64(std::uint64_t& state) {
  return Mix64(state += 0x9E3779B97F4A7C15ull);
}

// A seed for sub-task `stream` (a subspace, a cluster, a block of rows)
// derived from `seed`, so that parallel sub-tasks are independent yet
// reproducible regardless of how work is split across threads.
inline std::uint64_t MixSeed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull);
  return SplitMix64(s);
}

// xoshiro256** with uniform, bounded and normal samplers. Not thread-safe:
// one generator per thread (or per row/stream). Identical output on every
// platform for a seed.
class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = SplitMix64(sm);  // never an all-zero state
  }

  // Uniform 64-bit value.
  std::uint64_t Next() {
    const std::uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform double in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [0, bound); bound > 0. Lemire's multiply-shift with
  // rejection, so the result is exactly uniform.
  std::uint64_t Below(std::uint64_t bound) {
    for (;;) {
      const unsigned __int128 m = static_cast<unsigned __int128>(Next()) * bound;
      const auto low = static_cast<std::uint64_t>(m);
      if (low >= bound || low >= (-bound) % bound) return static_cast<std::uint64_t>(m >> 64);
    }
  }

  // Standard normal N(0, 1) by Box-Muller (the second value of each pair is
  // kept for the next call).
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - Uniform();  // in (0, 1]: the log is finite
    const double u2 = Uniform();
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 6.283185307179586476925 * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  static std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace strata

#endif  // STRATA_BASE_RANDOM_H_
