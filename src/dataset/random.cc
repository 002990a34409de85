#include "dataset/random.h"

#include <cmath>

namespace strata::dataset_internal {

namespace {

constexpr int kLayers = 256;
// Right edge of the base layer and the common layer area for 256 layers
// (Marsaglia & Tsang 2000, table for n = 256).
constexpr double kR = 3.6541528853610088;
constexpr double kV = 0.00492867323399;

// Layer boundaries x[0..256] (x[0] is the base layer's equivalent width
// v / f(r), x[1] = r, decreasing to x[256] = 0) and f(x[i]) = exp(-x^2/2).
struct ZigguratTables {
  double x[kLayers + 1];
  double f[kLayers + 1];
  ZigguratTables() {
    auto pdf = [](double v) { return std::exp(-0.5 * v * v); };
    x[0] = kV / pdf(kR);
    x[1] = kR;
    for (int i = 1; i < kLayers - 1; ++i)
      x[i + 1] = std::sqrt(-2.0 * std::log(kV / x[i] + pdf(x[i])));
    x[kLayers] = 0.0;
    for (int i = 0; i <= kLayers; ++i) f[i] = pdf(x[i]);
  }
};

const ZigguratTables& Tables() {
  static const ZigguratTables tables;  // thread-safe one-time initialisation
  return tables;
}

}  // namespace

double Rng::Normal() {
  const ZigguratTables& t = Tables();
  for (;;) {
    // One 64-bit draw supplies the layer (8 bits), the sign (1 bit) and a
    // 53-bit uniform (top bits), which are independent.
    const std::uint64_t u = Next();
    const int i = static_cast<int>(u & 0xff);
    const bool negative = (u >> 8) & 1;
    const double x = static_cast<double>(u >> 11) * 0x1p-53 * t.x[i];
    if (x < t.x[i + 1]) return negative ? -x : x;  // inside the layer's core: accept
    if (i == 0) {
      // Base layer beyond r: sample the tail exactly (Marsaglia 1964).
      double a, b;
      do {
        a = -std::log(1.0 - Uniform()) / kR;
        b = -std::log(1.0 - Uniform());
      } while (b + b < a * a);
      return negative ? -(kR + a) : kR + a;
    }
    // Wedge between the rectangle and the curve: accept under the density.
    const double y = t.f[i] + Uniform() * (t.f[i + 1] - t.f[i]);
    if (y < std::exp(-0.5 * x * x)) return negative ? -x : x;
  }
}

}  // namespace strata::dataset_internal
