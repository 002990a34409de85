// Counter-seeded random streams for the synthetic generator.
//
// Every row of synthetic data draws from its own stream, seeded from
// (seed, stream id, row index) through a bijective 64-bit mixer. That makes a
// row's values a pure function of its index, so the output never depends on
// the thread count or on how rows are split into blocks.
//   - SplitMix64 (Steele, Lea, Flood 2014) seeds and mixes.
//   - xoshiro256** (Blackman, Vigna 2018) produces each stream.
//   - Normals use the 256-layer ziggurat of Marsaglia & Tsang (2000), "The
//     Ziggurat Method for Generating Random Variables", with 53-bit uniforms.
#ifndef STRATA_DATASET_RANDOM_H_
#define STRATA_DATASET_RANDOM_H_

#include <cstdint>

namespace strata::dataset_internal {

// The SplitMix64 output function: a bijection on 64-bit values with good
// avalanche, used to derive seeds.
inline std::uint64_t Mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// The seed of stream `stream`, element `index` under the user seed: distinct
// indices give distinct seeds for a fixed (seed, stream).
inline std::uint64_t StreamSeed(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t h = Mix64(Mix64(seed + 0x9e3779b97f4a7c15ull) ^
                                (stream * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull));
  return Mix64(h ^ index);
}

// xoshiro256**: 256-bit state, period 2^256 - 1. Not thread-safe (one per
// thread or per row).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    // Expand the seed with SplitMix64, which never yields an all-zero state.
    for (auto& word : s_) {
      seed += 0x9e3779b97f4a7c15ull;
      word = Mix64(seed);
    }
  }

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

  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1p-53; }

  // Uniform integer in [0, n) (n > 0), by multiply-high (bias below 2^-32 for
  // the n used here, irrelevant for data generation).
  std::uint64_t Below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(Next()) * n) >> 64);
  }

  // Standard normal N(0, 1) by the ziggurat method.
  double Normal();

 private:
  static std::uint64_t Rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_RANDOM_H_
