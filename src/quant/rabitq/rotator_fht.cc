// Structured random rotation: rounds of random signs, a fast Walsh-Hadamard
// transform on a power-of-two block, and a Kac butterfly across the halves.
//
// Why this shape: one sign flip + Hadamard (HD) already spreads a vector's
// mass over all coordinates, and a few HD rounds make the coordinates close
// to those of a Haar rotation for RaBitQ's purposes (the RaBitQ library ships
// the same construction as its default rotator); it costs O(D' log D') and
// 4-6 D' bits instead of O(D'^2) and D'^2 floats. When D' is not a power of
// two the Hadamard acts on T < D' coordinates, alternately the first and the
// last T, and the butterfly (x_i, x_{i+D'/2}) mixes the halves, so no
// coordinate is left out; that variant mixes more slowly, hence 6 rounds
// instead of 4 (FhtRounds, rotator.h).
//
// Each round is R_k = K * H_block * S_k with S_k the signs, all three
// orthogonal (H and K normalised); the normalisations are folded into the
// sign multipliers (a uniform scale of the block commutes with the Hadamard
// on it, and a uniform scale of everything with the butterfly), so a round
// is one multiply pass, the in-place FWHT and, if needed, the butterfly.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "quant/rabitq/le_coding.h"
#include "base/random.h"
#include "quant/rabitq/rotator.h"

namespace strata::quant::rabitq {
namespace {

std::size_t LargestPowerOfTwoAtMost(std::size_t n) {
  std::size_t p = 1;
  while (p * 2 <= n) p *= 2;
  return p;
}

// Unnormalised in-place Walsh-Hadamard transform of n = 2^k >= 8 floats.
void Fwht(float* x, std::size_t n) {
  // Levels h = 1, 2, 4 together on groups of 8 (short strides do not
  // vectorise as separate passes; the 8-point transform is straight-line).
  for (std::size_t i = 0; i < n; i += 8) {
    float* v = x + i;
    const float a0 = v[0] + v[1], a1 = v[0] - v[1];
    const float a2 = v[2] + v[3], a3 = v[2] - v[3];
    const float a4 = v[4] + v[5], a5 = v[4] - v[5];
    const float a6 = v[6] + v[7], a7 = v[6] - v[7];
    const float b0 = a0 + a2, b2 = a0 - a2, b1 = a1 + a3, b3 = a1 - a3;
    const float b4 = a4 + a6, b6 = a4 - a6, b5 = a5 + a7, b7 = a5 - a7;
    v[0] = b0 + b4;
    v[4] = b0 - b4;
    v[1] = b1 + b5;
    v[5] = b1 - b5;
    v[2] = b2 + b6;
    v[6] = b2 - b6;
    v[3] = b3 + b7;
    v[7] = b3 - b7;
  }
  for (std::size_t h = 8; h < n; h *= 2) {
    for (std::size_t i = 0; i < n; i += 2 * h) {
      float* lo = x + i;
      float* hi = x + i + h;
      for (std::size_t j = 0; j < h; ++j) {
        const float a = lo[j];
        const float b = hi[j];
        lo[j] = a + b;
        hi[j] = a - b;
      }
    }
  }
}

// Unnormalised butterfly between the two halves of x (n even).
void KacButterfly(float* x, std::size_t n) {
  const std::size_t half = n / 2;
  float* lo = x;
  float* hi = x + half;
  for (std::size_t j = 0; j < half; ++j) {
    const float a = lo[j];
    const float b = hi[j];
    lo[j] = a + b;
    hi[j] = a - b;
  }
}

class FhtRotator final : public Rotator {
 public:
  // `sign_bits` holds rounds * D' / 8 bytes (layout in rotator.h).
  FhtRotator(std::size_t dim, std::uint64_t seed, std::vector<std::uint8_t> sign_bits)
      : Rotator(RotatorKind::kFhtKac, dim, seed),
        rounds_(FhtRounds(padded_dim())),
        block_(LargestPowerOfTwoAtMost(padded_dim())),
        sign_bits_(std::move(sign_bits)) {
    const std::size_t dp = padded_dim();
    // Per-round scale: 1/sqrt(T) for the coordinates the Hadamard touches,
    // times 1/sqrt(2) for the butterfly when there is one.
    const double kac_scale = block_ != dp ? 1.0 / std::sqrt(2.0) : 1.0;
    const double block_scale = kac_scale / std::sqrt(static_cast<double>(block_));
    multipliers_.resize(static_cast<std::size_t>(rounds_) * dp);
    for (int k = 0; k < rounds_; ++k) {
      const std::size_t start = BlockStart(k);
      for (std::size_t i = 0; i < dp; ++i) {
        const bool negate = (sign_bits_[k * dp / 8 + i / 8] >> (i % 8)) & 1u;
        const double scale = (i >= start && i < start + block_) ? block_scale : kac_scale;
        multipliers_[k * dp + i] = static_cast<float>(negate ? -scale : scale);
      }
    }
  }

  void Rotate(const float* in, float* out) const override {
    const std::size_t dp = padded_dim();
    std::memcpy(out, in, dim() * sizeof(float));
    std::memset(out + dim(), 0, (dp - dim()) * sizeof(float));
    for (int k = 0; k < rounds_; ++k) {
      const float* m = multipliers_.data() + static_cast<std::size_t>(k) * dp;
      for (std::size_t i = 0; i < dp; ++i) out[i] *= m[i];
      Fwht(out + BlockStart(k), block_);
      if (block_ != dp) KacButterfly(out, dp);
    }
  }

  void InverseRotate(const float* in, float* out) const override {
    const std::size_t dp = padded_dim();
    std::vector<float> x(in, in + dp);
    // Each normalised step is symmetric and orthogonal, hence its own
    // inverse: undo the rounds in reverse order, steps reversed.
    for (int k = rounds_ - 1; k >= 0; --k) {
      if (block_ != dp) KacButterfly(x.data(), dp);
      Fwht(x.data() + BlockStart(k), block_);
      const float* m = multipliers_.data() + static_cast<std::size_t>(k) * dp;
      for (std::size_t i = 0; i < dp; ++i) x[i] *= m[i];
    }
    std::memcpy(out, x.data(), dim() * sizeof(float));
  }

 protected:
  std::size_t BodySize() const override { return 8 + sign_bits_.size(); }
  void WriteBody(std::uint8_t* out) const override {
    StoreLE<std::uint32_t>(out, static_cast<std::uint32_t>(rounds_));
    StoreLE<std::uint32_t>(out + 4, static_cast<std::uint32_t>(block_));
    std::memcpy(out + 8, sign_bits_.data(), sign_bits_.size());
  }

 private:
  // Even rounds transform the first T coordinates, odd rounds the last T.
  std::size_t BlockStart(int round) const { return (round % 2 == 0) ? 0 : padded_dim() - block_; }

  int rounds_;                           // FhtRounds(D')
  std::size_t block_;                    // T: largest power of two <= D'
  std::vector<std::uint8_t> sign_bits_;  // rounds * D'/8 bytes, as serialised
  std::vector<float> multipliers_;       // rounds * D': +-(coordinate's round scale)
};

}  // namespace

Result<std::unique_ptr<Rotator>> CreateFhtRotator(std::size_t dim, std::uint64_t seed) {
  const std::size_t dp = PaddedDim(dim);
  std::vector<std::uint8_t> bits(static_cast<std::size_t>(FhtRounds(dp)) * dp / 8);
  Xoshiro256 rng(seed);
  for (std::size_t i = 0; i < bits.size(); i += 8) {
    StoreLE<std::uint64_t>(bits.data() + i, rng.Next());  // D'/8 is a multiple of 8
  }
  return std::unique_ptr<Rotator>(new FhtRotator(dim, seed, std::move(bits)));
}

Result<std::unique_ptr<Rotator>> ReadFhtRotator(std::size_t dim, std::uint64_t seed,
                                                std::span<const std::uint8_t> body) {
  const std::size_t dp = PaddedDim(dim);
  const std::size_t sign_bytes = static_cast<std::size_t>(FhtRounds(dp)) * dp / 8;
  if (body.size() != 8 + sign_bytes) {
    return Status::Corruption("fht rotator blob: body of " + std::to_string(body.size()) +
                              " bytes, expected " + std::to_string(8 + sign_bytes));
  }
  if (LoadLE<std::uint32_t>(body.data()) != static_cast<std::uint32_t>(FhtRounds(dp)) ||
      LoadLE<std::uint32_t>(body.data() + 4) != LargestPowerOfTwoAtMost(dp)) {
    return Status::Corruption("fht rotator blob: unexpected rounds or block size");
  }
  std::vector<std::uint8_t> bits(body.begin() + 8, body.end());
  return std::unique_ptr<Rotator>(new FhtRotator(dim, seed, std::move(bits)));
}

}  // namespace strata::quant::rabitq
