// Deterministic random numbers for the RaBitQ rotations and the ex-code
// calibration.
//
// A stored index must be able to regenerate (or at least re-check) its
// rotation from the seed on any platform, so nothing here uses the
// implementation-defined std:: distributions: the generator is xoshiro256**
// seeded through SplitMix64 and normals come from Box-Muller in double.
#ifndef STRATA_QUANT_RABITQ_RNG_H_
#define STRATA_QUANT_RABITQ_RNG_H_

#include <cmath>
#include <cstdint>

namespace strata::quant::rabitq {

// SplitMix64 step: returns the next output and advances `state`.
inline std::uint64_t SplitMix64Next(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xoshiro256** with a Box-Muller normal sampler. Not thread-safe: one
// generator per thread. Output is identical on every platform for a seed.
class Xoshiro256 {
 public:
  explicit Xoshiro256(std::uint64_t seed) {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = SplitMix64Next(sm);
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

  // Standard normal N(0, 1) (Box-Muller; the second value of each pair is
  // kept for the next call).
  double Normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    // 1 - Uniform() is in (0, 1], so the log is finite.
    const double u1 = 1.0 - Uniform();
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

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_RNG_H_
