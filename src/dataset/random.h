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

#include "base/random.h"

namespace strata::dataset_internal {

// The seed of stream `stream`, element `index` under the user seed: distinct
// indices give distinct seeds for a fixed (seed, stream).
inline std::uint64_t StreamSeed(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t h = Mix64(Mix64(seed + 0x9e3779b97f4a7c15ull) ^
                                (stream * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull));
  return Mix64(h ^ index);
}

// The shared xoshiro256** generator (base/random.h) with a ziggurat normal
// sampler, which is several times faster than Box-Muller for the millions of
// normals a data set needs. Not thread-safe (one per thread or per row).
class Rng : public Xoshiro256 {
 public:
  using Xoshiro256::Xoshiro256;
  // Standard normal N(0, 1) by the ziggurat method.
  double Normal();
};

}  // namespace strata::dataset_internal

#endif  // STRATA_DATASET_RANDOM_H_
