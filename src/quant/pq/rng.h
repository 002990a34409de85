// Deterministic pseudo-random numbers for training (sampling, initialisation).
//
// std::uniform_int_distribution and friends are implementation-defined, so the
// same seed could give different samples on different standard libraries; the
// quantizers promise "identical results for the same seed", hence this small
// fully specified generator (xoshiro256** seeded through SplitMix64).
#ifndef STRATA_QUANT_PQ_RNG_H_
#define STRATA_QUANT_PQ_RNG_H_

#include <cstdint>

namespace strata::quant {

// SplitMix64 step: returns the next output and advances `state`. Also a good
// 64-bit mixer for deriving independent sub-seeds (MixSeed).
inline std::uint64_t SplitMix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A seed for sub-task `stream` (a subspace, a coarse cluster) derived from
// `seed`, so that parallel sub-tasks are independent yet reproducible.
inline std::uint64_t MixSeed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull);
  return SplitMix64(s);
}

// xoshiro256** (Blackman & Vigna). Not thread-safe: one generator per thread.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = SplitMix64(sm);
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

  // Uniform integer in [0, bound); bound must be > 0. Lemire's multiply-shift
  // with rejection, so the result is exactly uniform.
  std::uint64_t Below(std::uint64_t bound) {
    for (;;) {
      const unsigned __int128 m = static_cast<unsigned __int128>(Next()) * bound;
      const auto low = static_cast<std::uint64_t>(m);
      if (low >= bound || low >= (-bound) % bound) {
        return static_cast<std::uint64_t>(m >> 64);
      }
    }
  }

  // Uniform double in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  static std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_RNG_H_
