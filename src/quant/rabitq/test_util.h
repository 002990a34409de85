// Helpers shared by the RaBitQ unit tests (not part of the library).
#ifndef STRATA_QUANT_RABITQ_TEST_UTIL_H_
#define STRATA_QUANT_RABITQ_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "quant/rabitq/layout.h"
#include "quant/rabitq/quantizer.h"
#include "base/random.h"

namespace strata::quant::rabitq::testing {

// n standard normal floats.
inline std::vector<float> GaussianVector(Xoshiro256& rng, std::size_t n, double scale = 1.0) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.Normal() * scale);
  return v;
}

inline double Dot(const float* a, const float* b, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

inline double SquaredL2(const float* a, const float* b, std::size_t n) {
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(a[i]) - b[i];
    s += d * d;
  }
  return s;
}

// A unit vector uniform on the sphere, and a unit vector orthogonal to `x`.
inline std::vector<double> UnitVector(Xoshiro256& rng, std::size_t n) {
  std::vector<double> v(n);
  double norm = 0.0;
  for (double& x : v) {
    x = rng.Normal();
    norm += x * x;
  }
  norm = std::sqrt(norm);
  for (double& x : v) x /= norm;
  return v;
}
inline std::vector<double> UnitOrthogonalTo(Xoshiro256& rng, const std::vector<double>& x) {
  std::vector<double> e = UnitVector(rng, x.size());
  double proj = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) proj += e[i] * x[i];
  double norm = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    e[i] -= proj * x[i];
    norm += e[i] * e[i];
  }
  norm = std::sqrt(norm);
  for (double& v : e) v /= norm;
  return e;
}

// A data vector o and query q around centre c with unit residual directions
// at inner product exactly beta: o = c + rho_o x, q = c + rho_q (beta x +
// sqrt(1 - beta^2) e).
struct Pair {
  std::vector<float> o;
  std::vector<float> q;
};
inline Pair MakePair(Xoshiro256& rng, const std::vector<float>& c, double beta, double rho_o,
                     double rho_q) {
  const std::size_t n = c.size();
  const std::vector<double> x = UnitVector(rng, n);
  const std::vector<double> e = UnitOrthogonalTo(rng, x);
  const double perp = std::sqrt(1.0 - beta * beta);
  Pair p;
  p.o.resize(n);
  p.q.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    p.o[i] = static_cast<float>(c[i] + rho_o * x[i]);
    p.q[i] = static_cast<float>(c[i] + rho_q * (beta * x[i] + perp * e[i]));
  }
  return p;
}

// A quantizer for `options`; a test failure if they are refused.
inline RabitqQuantizer MakeQuantizer(RabitqOptions options) {
  auto q = RabitqQuantizer::Create(options);
  EXPECT_TRUE(q.ok()) << q.status().ToString();
  return std::move(q).value();
}

// One vector encoded into a RAM batch block (slot 0), an SSD record and a
// listed code.
struct EncodedOne {
  std::vector<std::uint8_t> block;
  std::vector<std::uint8_t> record;
  std::vector<std::uint8_t> listed;
};
inline EncodedOne EncodeOne(const RabitqQuantizer& quantizer, const float* vector,
                            const float* rotated_centroid, RabitqCode* scratch) {
  EncodedOne out;
  const RabitqLayout& layout = quantizer.layout();
  out.block.resize(layout.ram_batch_bytes());
  out.record.resize(layout.ssd_record_bytes());
  out.listed.resize(layout.listed_code_bytes());
  if (!quantizer.Encode(vector, rotated_centroid, scratch, out.listed.data()).ok()) return {};
  const RabitqCode* codes[1] = {scratch};
  PackRamBatch(layout, codes, out.block.data());
  WriteSsdRecord(layout, *scratch, out.record.data());
  return out;
}

// A data vector encoded against rotated centre `rotated_centroid` and a
// query prepared with its factors for that cluster.
struct EncodedPair {
  EncodedOne enc;
  RabitqQuery query;
  ClusterQueryFactors cluster;
};
inline EncodedPair EncodePair(const RabitqQuantizer& quantizer, const float* vector,
                              const float* query, const float* rotated_centroid) {
  EncodedPair p;
  RabitqCode code;
  p.enc = EncodeOne(quantizer, vector, rotated_centroid, &code);
  EXPECT_TRUE(quantizer.PrepareQuery(query, &p.query).ok());
  p.cluster = quantizer.ForCluster(p.query, rotated_centroid);
  return p;
}

// Mean and standard error of the mean.
struct MeanSe {
  double mean = 0.0;
  double sd = 0.0;
  double se = 0.0;
};
inline MeanSe Summarise(const std::vector<double>& x) {
  MeanSe m;
  for (double v : x) m.mean += v;
  m.mean /= static_cast<double>(x.size());
  double var = 0.0;
  for (double v : x) var += (v - m.mean) * (v - m.mean);
  var /= static_cast<double>(x.size() - 1);
  m.sd = std::sqrt(var);
  m.se = m.sd / std::sqrt(static_cast<double>(x.size()));
  return m;
}

// Upper tail of the standard normal, P(Z > z).
inline double NormalUpperTail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

// 4 binomial standard errors around p for n trials, plus 1/n for p ~ 0.
inline double RateTolerance(double p, std::size_t n) {
  return 4.0 * std::sqrt(p * (1.0 - p) / static_cast<double>(n)) + 1.0 / static_cast<double>(n);
}

// Isotropic random pairs at inner product beta around a fixed random centre.
struct PairSource {
  Xoshiro256 rng;
  std::vector<float> c;
  explicit PairSource(std::size_t d, std::uint64_t seed) : rng(seed) {
    c = GaussianVector(rng, d, 0.3);
  }
  Pair Next(double beta) { return MakePair(rng, c, beta, 1.0, 1.5); }
};

}  // namespace strata::quant::rabitq::testing

#endif  // STRATA_QUANT_RABITQ_TEST_UTIL_H_
