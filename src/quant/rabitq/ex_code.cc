// Extended RaBitQ code search, packing and the re-ranking dot product.
#include "quant/rabitq/ex_code.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "base/random.h"

namespace strata::quant::rabitq {
namespace {

// Fraction of t_end where the sweep starts, by ex. For a rotated residual
// (near-Gaussian a) the best t sits at about 0.24-0.30, 0.35-0.40, 0.48-0.55,
// 0.62-0.65, 0.73-0.79, 0.83-0.87, 0.89-0.94 and 0.95-0.97 of t_end for
// ex = 1..8 (measured at D' = 128; the spread shrinks with D'); each start
// leaves a margin of about 0.15 below that. (The RaBitQ library's table,
// 0.52 for ex = 3, cuts off the optimum for some vectors.) Small ex sweep
// everything: at most 3 D' events.
constexpr double kStartFraction[kMaxExBits + 1] = {0.0,  0.0,  0.0,  0.30, 0.40,
                                                   0.55, 0.65, 0.75, 0.80};
// floor(t * a + kRoundingSlack): values that land within float noise below an
// integer count as that integer (t often sits exactly on an event).
constexpr double kRoundingSlack = 1e-5;
// The sweep schedules k_i's increment at the t where t * a_i + kRoundingSlack
// passes k_i + 1 by half the slack, so ExCodeQuantize at a recorded best t
// reproduces the swept state despite rounding in t * a_i.
constexpr double kEventOffset = 1.0 - 0.5 * kRoundingSlack;

std::uint64_t LoadGroup(const std::uint8_t* p, int ex_bits) {
  std::uint64_t w = 0;
  std::memcpy(&w, p, static_cast<std::size_t>(ex_bits));  // little-endian host
  return w;
}

template <int kEx>
float ExCodeDotImpl(const std::uint8_t* packed, const float* q, std::size_t n) {
  constexpr std::uint64_t kMask = (std::uint64_t{1} << kEx) - 1;
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t g = 0; g < n / 8; ++g) {
    std::uint64_t w = 0;
    std::memcpy(&w, packed + g * kEx, kEx);
    const float* qg = q + g * 8;
    for (int j = 0; j < 8; ++j) {
      acc[j] += static_cast<float>((w >> (j * kEx)) & kMask) * qg[j];
    }
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

}  // namespace

double ExCodeObjective(const float* a, std::size_t n, int ex_bits, double t) {
  const int kmax = (1 << ex_bits) - 1;
  double num = 0.0;
  double den = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double k = std::min<double>(std::floor(t * a[i] + kRoundingSlack), kmax);
    num += (k + 0.5) * a[i];
    den += (k + 0.5) * (k + 0.5);
  }
  return den > 0.0 ? num / std::sqrt(den) : 0.0;
}

double ExCodeScaleEnd(const float* a, std::size_t n, int ex_bits) {
  float max_a = 0.0f;
  for (std::size_t i = 0; i < n; ++i) max_a = std::max(max_a, a[i]);
  if (!(max_a > 0.0f)) return 0.0;
  return ((1 << ex_bits) - 1 + 10.0) / max_a;
}

double ExCodeBestScale(const float* a, std::size_t n, int ex_bits) {
  const int kmax = (1 << ex_bits) - 1;
  // Beyond t_end the largest coordinate is saturated well past kmax and the
  // cosine can only fall as more coordinates saturate.
  const double t_end = ExCodeScaleEnd(a, n, ex_bits);
  if (t_end == 0.0) return 0.0;
  const double t_start = t_end * kStartFraction[ex_bits];

  // Events (the t at which some k_i increments) are visited in increasing t
  // through a bucket queue over [t_start, t_end]: with at least
  // 4 (kmax + 10) buckets, a bucket is narrower than a quarter of the gap
  // 1 / a_i >= 1 / max a between two events of one coordinate, so the next
  // event of a coordinate always lands in a later bucket, and only the few
  // events inside one bucket need sorting. (A binary heap costs ~100 ns per
  // event here; this ~10 ns.)
  const std::size_t buckets = std::max<std::size_t>(n, 4 * static_cast<std::size_t>(kmax + 10));
  const double inv_width = static_cast<double>(buckets) / (t_end - t_start);
  struct Event {
    double t;
    std::uint32_t i;
    std::int32_t next;  // next event in the same bucket (pool index), -1 ends
  };
  thread_local std::vector<std::int32_t> head;
  thread_local std::vector<Event> pool;
  thread_local std::vector<std::pair<double, std::uint32_t>> current;
  thread_local std::vector<int> k;
  thread_local std::vector<double> inv_a;  // 1 / a_i: no division per event
  head.assign(buckets, -1);
  pool.clear();
  k.resize(n);
  inv_a.resize(n);
  auto push = [&](double t, std::size_t i) {
    if (t > t_end) return;
    const double pos = (t - t_start) * inv_width;
    const std::size_t b = pos <= 0.0 ? 0 : std::min(buckets - 1, static_cast<std::size_t>(pos));
    pool.push_back({t, static_cast<std::uint32_t>(i), head[b]});
    head[b] = static_cast<std::int32_t>(pool.size() - 1);
  };

  // State at t_start. num = <k + 1/2, a>, den = ||k + 1/2||^2.
  double num = 0.0;
  double den = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const int ki =
        static_cast<int>(std::min<double>(std::floor(t_start * a[i] + kRoundingSlack), kmax));
    k[i] = ki;
    num += (ki + 0.5) * a[i];
    den += (ki + 0.5) * (ki + 0.5);
    // (Rounding in the reciprocal is ~1e-16 relative, far inside the half
    // slack kEventOffset leaves.)
    inv_a[i] = a[i] > 0.0f ? 1.0 / a[i] : 0.0;
    if (ki < kmax && a[i] > 0.0f) push((ki + kEventOffset) * inv_a[i], i);
  }
  // Compare cosines as num^2 / den (num > 0) by cross-multiplication: same
  // argmax, no sqrt or division per event.
  double best_t = t_start;
  double best_num2 = num * num;
  double best_den = den;
  for (std::size_t b = 0; b < buckets; ++b) {
    current.clear();
    for (std::int32_t e = head[b]; e >= 0; e = pool[e].next) {
      current.emplace_back(pool[e].t, pool[e].i);
    }
    std::sort(current.begin(), current.end());
    for (const auto& [t, i] : current) {
      const int ki = ++k[i];
      num += a[i];
      den += 2.0 * ki;  // (k + 3/2)^2 - (k + 1/2)^2 = 2 (k + 1)
      const double num2 = num * num;
      if (num2 * best_den > best_num2 * den) {
        best_num2 = num2;
        best_den = den;
        best_t = t;
      }
      if (ki < kmax) push((ki + kEventOffset) * inv_a[i], i);
    }
  }
  return best_t;
}

double ExCodeFastFraction(std::size_t n, int ex_bits, std::uint64_t seed) {
  constexpr int kSamples = 100;
  Xoshiro256 rng(seed);
  std::vector<float> a(n);
  double sum = 0.0;
  for (int s = 0; s < kSamples; ++s) {
    double norm_sq = 0.0;
    for (float& v : a) {
      v = static_cast<float>(rng.Normal());
      norm_sq += static_cast<double>(v) * v;
    }
    const double inv = norm_sq > 0.0 ? 1.0 / std::sqrt(norm_sq) : 0.0;
    for (float& v : a) v = static_cast<float>(std::fabs(v) * inv);
    sum += ExCodeBestScale(a.data(), n, ex_bits) / ExCodeScaleEnd(a.data(), n, ex_bits);
  }
  return sum / kSamples;
}

void ExCodeQuantize(const float* a, std::size_t n, int ex_bits, double t, std::uint8_t* k) {
  const double kmax = (1 << ex_bits) - 1;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = std::floor(t * a[i] + kRoundingSlack);
    k[i] = static_cast<std::uint8_t>(std::clamp(v, 0.0, kmax));
  }
}

void PackExCode(const std::uint8_t* values, std::size_t n, int ex_bits, std::uint8_t* out) {
  for (std::size_t g = 0; g < n / 8; ++g) {
    std::uint64_t w = 0;
    for (int j = 0; j < 8; ++j) {
      w |= static_cast<std::uint64_t>(values[g * 8 + j]) << (j * ex_bits);
    }
    std::memcpy(out + g * ex_bits, &w, static_cast<std::size_t>(ex_bits));
  }
}

void UnpackExCode(const std::uint8_t* packed, std::size_t n, int ex_bits, std::uint8_t* values) {
  const std::uint64_t mask = (std::uint64_t{1} << ex_bits) - 1;
  for (std::size_t g = 0; g < n / 8; ++g) {
    const std::uint64_t w = LoadGroup(packed + g * ex_bits, ex_bits);
    for (int j = 0; j < 8; ++j) {
      values[g * 8 + j] = static_cast<std::uint8_t>((w >> (j * ex_bits)) & mask);
    }
  }
}

float ExCodeDot(const std::uint8_t* packed, const float* q, std::size_t n, int ex_bits) {
  // One instantiation per width so the shifts and masks are constants.
  switch (ex_bits) {
    case 1:
      return ExCodeDotImpl<1>(packed, q, n);
    case 2:
      return ExCodeDotImpl<2>(packed, q, n);
    case 3:
      return ExCodeDotImpl<3>(packed, q, n);
    case 4:
      return ExCodeDotImpl<4>(packed, q, n);
    case 5:
      return ExCodeDotImpl<5>(packed, q, n);
    case 6:
      return ExCodeDotImpl<6>(packed, q, n);
    case 7:
      return ExCodeDotImpl<7>(packed, q, n);
    case 8:
      return ExCodeDotImpl<8>(packed, q, n);
    default:
      return 0.0f;
  }
}

}  // namespace strata::quant::rabitq
