// Micro-benchmarks for the RaBitQ quantizers (src/quant/rabitq): rotation
// (dense vs FHT-Kac), encoding throughput, FastScan distance estimates per
// second per ISA, query preparation and B-bit refinement. Results and the
// commands that produced them: bench/results/quant_rabitq.md.
//
// Single-threaded throughout (items/s are per core). Data are standard
// Gaussian vectors with a fixed seed; the centroid is a random vector of
// norm ~0.3 sqrt(d), so codes and factors are realistic.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "quant/rabitq/quantizer.h"
#include "base/random.h"
#include "quant/rabitq/rotator.h"

namespace strata::quant::rabitq {
namespace {

std::vector<float> Gaussian(std::size_t n, std::uint64_t seed, double scale = 1.0) {
  Xoshiro256 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.Normal() * scale);
  return v;
}

RabitqQuantizer MustCreate(const RabitqOptions& options) {
  auto q = RabitqQuantizer::Create(options);
  if (!q.ok()) std::abort();  // benchmark set-up only
  return std::move(q).value();
}

// ---- Rotation: args {kind (0 dense, 1 fht), dim} ----

void BM_Rotate(benchmark::State& state) {
  const auto kind = static_cast<RotatorKind>(state.range(0));
  const auto dim = static_cast<std::size_t>(state.range(1));
  auto rot = Rotator::Create(kind, dim, 1);
  if (!rot.ok()) {
    state.SkipWithError(rot.status().ToString().c_str());
    return;
  }
  const auto x = Gaussian(dim, 2);
  std::vector<float> out((*rot)->padded_dim());
  for (auto _ : state) {
    (*rot)->Rotate(x.data(), out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetLabel(std::string(RotatorKindName(kind)));
}
BENCHMARK(BM_Rotate)
    ->ArgNames({"kind", "dim"})
    ->Args({0, 128})
    ->Args({1, 128})
    ->Args({0, 768})
    ->Args({1, 768})
    ->Args({0, 1536})
    ->Args({1, 1536});

// Batched rotation of 256 vectors (the dense kind uses one sgemm, OpenBLAS
// limited to one thread like inside EncodeCluster).
void BM_RotateBatch256(benchmark::State& state) {
  const auto kind = static_cast<RotatorKind>(state.range(0));
  const auto dim = static_cast<std::size_t>(state.range(1));
  auto rot = Rotator::Create(kind, dim, 1);
  if (!rot.ok()) {
    state.SkipWithError(rot.status().ToString().c_str());
    return;
  }
  constexpr std::size_t kRows = 256;
  const auto x = Gaussian(kRows * dim, 2);
  std::vector<float> out(kRows * (*rot)->padded_dim());
  for (auto _ : state) {
    (*rot)->RotateBatch(x.data(), kRows, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.SetLabel(std::string(RotatorKindName(kind)));
}
BENCHMARK(BM_RotateBatch256)
    ->ArgNames({"kind", "dim"})
    ->Args({0, 768})
    ->Args({1, 768})
    ->Args({0, 1536})
    ->Args({1, 1536});

// ---- Encoding: args {dim, total_bits, ex_search (0 exact, 1 fast), rotator} ----

void BM_EncodeCluster(benchmark::State& state) {
  const auto dim = static_cast<std::size_t>(state.range(0));
  const auto bits = static_cast<std::uint32_t>(state.range(1));
  const auto search = static_cast<ExCodeSearch>(state.range(2));
  const auto kind = static_cast<RotatorKind>(state.range(3));
  const auto qz = MustCreate({.dim = dim,
                              .total_bits = bits,
                              .prefix_dim = dim >= 256 ? dim / 2 : 0,
                              .rotator = kind,
                              .ex_search = search});
  constexpr std::size_t kRows = 1024;
  const auto data = Gaussian(kRows * dim, 3);
  const auto centroid = Gaussian(dim, 4, 0.3);
  std::vector<std::uint8_t> blocks(kRows / kBatchSize * qz.layout().ram_batch_bytes());
  std::vector<std::uint8_t> records(kRows * qz.layout().ssd_record_bytes());
  for (auto _ : state) {
    const Status s =
        qz.EncodeCluster(data.data(), kRows, centroid.data(), blocks.data(), records.data(), 1);
    if (!s.ok()) state.SkipWithError(s.ToString().c_str());
    benchmark::DoNotOptimize(blocks.data());
    benchmark::DoNotOptimize(records.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.SetLabel(std::string(RotatorKindName(kind)) +
                 (search == ExCodeSearch::kExact ? " exact" : " fast"));
}
BENCHMARK(BM_EncodeCluster)
    ->ArgNames({"dim", "B", "fast", "rot"})
    ->Args({128, 1, 0, 1})
    ->Args({128, 5, 0, 1})
    ->Args({128, 9, 0, 1})
    ->Args({128, 9, 1, 1})
    ->Args({768, 1, 0, 1})
    ->Args({768, 1, 0, 0})
    ->Args({768, 5, 0, 1})
    ->Args({768, 9, 0, 1})
    ->Args({768, 9, 1, 1})
    ->Unit(benchmark::kMillisecond);

// ---- FastScan: args {dim, prefix_dim (0 = all), isa} ----
// Estimates (est + lower bound) for 32 vectors per block over 1024 blocks
// (32768 vectors; 0.5 MB of codes at d = 128, 3.4 MB at d = 768).

void BM_FastScanEstimate(benchmark::State& state) {
  const auto dim = static_cast<std::size_t>(state.range(0));
  const auto prefix = static_cast<std::size_t>(state.range(1));
  const auto isa = static_cast<kernels::Isa>(state.range(2));
  const FastScanKernels* k = GetFastScanKernels(isa);
  if (k == nullptr) {
    state.SkipWithError("ISA not available on this CPU");
    return;
  }
  const auto qz = MustCreate({.dim = dim, .prefix_dim = prefix});
  constexpr std::size_t kBlocks = 1024;
  constexpr std::size_t kRows = kBlocks * kBatchSize;
  const auto data = Gaussian(kRows * dim, 5);
  const auto centroid = Gaussian(dim, 6, 0.3);
  const std::size_t block_bytes = qz.layout().ram_batch_bytes();
  std::vector<std::uint8_t> blocks(kBlocks * block_bytes);
  if (!qz.EncodeCluster(data.data(), kRows, centroid.data(), blocks.data(), nullptr, 0).ok()) {
    state.SkipWithError("encode failed");
    return;
  }
  const auto q = Gaussian(dim, 7);
  RabitqQuery query;
  if (!qz.PrepareQuery(q.data(), &query).ok()) std::abort();
  std::vector<float> rc(qz.padded_dim());
  qz.RotateCentroid(centroid.data(), rc.data());
  const ClusterQueryFactors cluster = qz.ForCluster(query, rc.data());
  BatchEstimates out;
  for (auto _ : state) {
    for (std::size_t b = 0; b < kBlocks; ++b) {
      qz.EstimateBatch(query, cluster, blocks.data() + b * block_bytes, *k, &out);
      benchmark::DoNotOptimize(out.est);
    }
  }
  state.SetItemsProcessed(state.iterations() * kRows);
  state.SetLabel(std::string(kernels::IsaName(isa)));
}
BENCHMARK(BM_FastScanEstimate)
    ->ArgNames({"dim", "dm", "isa"})
    ->Args({128, 0, 0})
    ->Args({128, 0, 1})
    ->Args({128, 0, 2})
    ->Args({768, 0, 0})
    ->Args({768, 0, 1})
    ->Args({768, 0, 2})
    ->Args({768, 256, 2})
    ->Args({1536, 0, 2});

// ---- Query side: preparation (rotation + tables) and B-bit refinement ----

void BM_PrepareQuery(benchmark::State& state) {
  const auto dim = static_cast<std::size_t>(state.range(0));
  const auto qz = MustCreate({.dim = dim});
  const auto q = Gaussian(dim, 8);
  RabitqQuery query;
  for (auto _ : state) {
    if (!qz.PrepareQuery(q.data(), &query).ok()) std::abort();
    benchmark::DoNotOptimize(query.lut.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PrepareQuery)->Arg(128)->Arg(768)->Arg(1536);

// args {dim, total_bits}: exact prefix sum + suffix + ex-code dot per call.
void BM_Refine(benchmark::State& state) {
  const auto dim = static_cast<std::size_t>(state.range(0));
  const auto bits = static_cast<std::uint32_t>(state.range(1));
  const auto qz = MustCreate({.dim = dim, .total_bits = bits, .prefix_dim = dim / 2});
  constexpr std::size_t kRows = 1024;
  const auto data = Gaussian(kRows * dim, 9);
  const auto centroid = Gaussian(dim, 10, 0.3);
  const std::size_t block_bytes = qz.layout().ram_batch_bytes();
  const std::size_t record_bytes = qz.layout().ssd_record_bytes();
  std::vector<std::uint8_t> blocks(kRows / kBatchSize * block_bytes);
  std::vector<std::uint8_t> records(kRows * record_bytes);
  if (!qz.EncodeCluster(data.data(), kRows, centroid.data(), blocks.data(), records.data(), 0)
           .ok()) {
    state.SkipWithError("encode failed");
    return;
  }
  const auto q = Gaussian(dim, 11);
  RabitqQuery query;
  if (!qz.PrepareQuery(q.data(), &query).ok()) std::abort();
  std::vector<float> rc(qz.padded_dim());
  qz.RotateCentroid(centroid.data(), rc.data());
  const ClusterQueryFactors cluster = qz.ForCluster(query, rc.data());
  for (auto _ : state) {
    float sum = 0.0f;
    for (std::size_t i = 0; i < kRows; ++i) {
      const float prefix =
          qz.ExactPrefixIp(query, blocks.data() + (i / kBatchSize) * block_bytes, i % kBatchSize);
      sum += qz.Refine(query, cluster, prefix, records.data() + i * record_bytes);
    }
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * kRows);
}
BENCHMARK(BM_Refine)
    ->ArgNames({"dim", "B"})
    ->Args({128, 1})
    ->Args({128, 9})
    ->Args({768, 1})
    ->Args({768, 5})
    ->Args({768, 9});

// ---- Accuracy of the rotations (not a speed benchmark) ----
// args {kind, dim}. A structured rotation is only as good as its mixing, and
// isotropic test data would hide a bad one (any rotation of isotropic data is
// isotropic), so this uses the worst case for a Hadamard transform: 8-sparse
// +-1 vectors, centre 0, query sharing 4 of the data vector's coordinates
// (beta = 1/2). Reports the 1-bit full-code estimator's bias and its error
// sd relative to the Haar theory sqrt((1 - beta^2) (pi/2 - 1) / (D' - 1)).
void BM_RotationAccuracy(benchmark::State& state) {
  const auto kind = static_cast<RotatorKind>(state.range(0));
  const auto dim = static_cast<std::size_t>(state.range(1));
  const auto qz = MustCreate({.dim = dim, .rotator = kind, .seed = 21});
  constexpr int kPairs = 4000;
  const std::vector<float> centre(dim, 0.0f);
  std::vector<float> rc(qz.padded_dim());
  qz.RotateCentroid(centre.data(), rc.data());
  Xoshiro256 rng(22);
  double sum = 0.0;
  double sum_sq = 0.0;
  for (auto _ : state) {
    for (int p = 0; p < kPairs; ++p) {
      std::vector<float> o(dim, 0.0f), q(dim, 0.0f);
      std::vector<std::size_t> coords;
      while (coords.size() < 12) {
        const std::size_t c = rng.Next() % dim;
        bool seen = false;
        for (std::size_t x : coords) seen = seen || x == c;
        if (!seen) coords.push_back(c);
      }
      // o on coords[0..8), q on coords[4..12): 4 shared coordinates.
      for (int j = 0; j < 12; ++j) {
        const float v = (rng.Next() & 1) ? 1.0f : -1.0f;
        if (j < 8) o[coords[j]] = v;
        if (j >= 4) q[coords[j]] = v;
      }
      RabitqCode code;
      std::vector<std::uint8_t> block(qz.layout().ram_batch_bytes());
      if (!qz.Encode(o.data(), rc.data(), &code).ok()) std::abort();
      const RabitqCode* codes[1] = {&code};
      PackRamBatch(qz.layout(), codes, block.data());
      RabitqQuery query;
      if (!qz.PrepareQuery(q.data(), &query).ok()) std::abort();
      BatchEstimates be;
      qz.EstimateBatch(query, qz.ForCluster(query, rc.data()), block.data(), &be);
      // est = |o|^2 + |q|^2 - 2 |o| |q| beta_hat with |o|^2 = |q|^2 = 8.
      const double beta_hat = (16.0 - be.est[0]) / 16.0;
      sum += beta_hat - 0.5;
      sum_sq += (beta_hat - 0.5) * (beta_hat - 0.5);
    }
  }
  const double n = static_cast<double>(state.iterations()) * kPairs;
  const double mean = sum / n;
  const double sd = std::sqrt(sum_sq / n - mean * mean);
  const double theory =
      std::sqrt(0.75 * (3.14159265358979 / 2 - 1) / (static_cast<double>(qz.padded_dim()) - 1));
  state.counters["bias"] = mean;
  state.counters["bias_se"] = sd / std::sqrt(n);
  state.counters["sd_vs_haar"] = sd / theory;
  state.SetLabel(std::string(RotatorKindName(kind)));
}
BENCHMARK(BM_RotationAccuracy)
    ->ArgNames({"kind", "dim"})
    ->Args({0, 768})
    ->Args({1, 768})
    ->Args({0, 1536})
    ->Args({1, 1536})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

// ---- Accuracy of the ex-code search modes (not a speed benchmark) ----
// args {total_bits, ex_search (0 exact, 1 fast)}, D = 768. Gaussian data
// around a centre, Gaussian queries; reports the RMS error of the refined
// B-bit estimate in units of the unit-vector inner product beta (the error
// of est divided by 2 ||r|| ||q - c||).
void BM_ExCodeAccuracy(benchmark::State& state) {
  const auto bits = static_cast<std::uint32_t>(state.range(0));
  const auto search = static_cast<ExCodeSearch>(state.range(1));
  constexpr std::size_t kDim = 768;
  constexpr std::size_t kRows = 1024;
  const auto qz = MustCreate({.dim = kDim, .total_bits = bits, .ex_search = search});
  const auto data = Gaussian(kRows * kDim, 31);
  const auto queries = Gaussian(kRows * kDim, 32);
  const auto centroid = Gaussian(kDim, 33, 0.3);
  const std::size_t block_bytes = qz.layout().ram_batch_bytes();
  const std::size_t record_bytes = qz.layout().ssd_record_bytes();
  std::vector<std::uint8_t> blocks(kRows / kBatchSize * block_bytes);
  std::vector<std::uint8_t> records(kRows * record_bytes);
  std::vector<float> rc(qz.padded_dim());
  qz.RotateCentroid(centroid.data(), rc.data());
  double sum_sq = 0.0;
  for (auto _ : state) {
    if (!qz.EncodeCluster(data.data(), kRows, centroid.data(), blocks.data(), records.data(), 0)
             .ok()) {
      std::abort();
    }
    sum_sq = 0.0;
    RabitqQuery query;
    for (std::size_t i = 0; i < kRows; ++i) {
      const float* q = queries.data() + i * kDim;
      const float* o = data.data() + i * kDim;
      if (!qz.PrepareQuery(q, &query).ok()) std::abort();
      const ClusterQueryFactors cluster = qz.ForCluster(query, rc.data());
      const float prefix =
          qz.ExactPrefixIp(query, blocks.data() + (i / kBatchSize) * block_bytes, i % kBatchSize);
      const double est = qz.Refine(query, cluster, prefix, records.data() + i * record_bytes);
      double truth = 0.0, r2 = 0.0, qc2 = 0.0;
      for (std::size_t j = 0; j < kDim; ++j) {
        truth += (static_cast<double>(o[j]) - q[j]) * (static_cast<double>(o[j]) - q[j]);
        r2 += (static_cast<double>(o[j]) - centroid[j]) * (o[j] - centroid[j]);
        qc2 += (static_cast<double>(q[j]) - centroid[j]) * (q[j] - centroid[j]);
      }
      const double err = (est - truth) / (2.0 * std::sqrt(r2 * qc2));
      sum_sq += err * err;
    }
  }
  state.counters["rms_beta_error"] = std::sqrt(sum_sq / kRows);
  state.SetLabel(search == ExCodeSearch::kExact ? "exact" : "fast");
}
BENCHMARK(BM_ExCodeAccuracy)
    ->ArgNames({"B", "fast"})
    ->Args({1, 0})
    ->Args({3, 0})
    ->Args({3, 1})
    ->Args({5, 0})
    ->Args({5, 1})
    ->Args({9, 0})
    ->Args({9, 1})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace strata::quant::rabitq

BENCHMARK_MAIN();
