// Micro-benchmarks of k-means and product quantization.
//
//   PqEncode/d/m          rows encoded per second (items/s), all threads
//   PqAdcBatch/m/isa      ADC distance estimates per second over a batch of
//                         codes (items/s = codes scored), per compiled ISA
//   PqAdcSingle/m         one code at a time through ComputeDistance
//   PqDistanceTable/d/m   per-query ADC table builds per second (L2)
//   KMeans/n/d/k          Lloyd iterations on in-memory clustered data
//
// Code sizes: d = 128 with m = 16/32/64 bytes, d = 768 with m = 96/192.
// The ADC batch cycles through 64 Ki codes (1-12 MiB) so the codes stream
// from cache/memory as in a real scan, while the table (m KiB) stays in L1/L2.
//
// Comparison mode (not a Google Benchmark; used by
// bench/scripts/kmeans_vs_faiss.py):
//   quant_pq_bench --kmeans_fbin=PATH [--kmeans_k=1024] [--kmeans_iters=20]
//       [--kmeans_threads=2] [--kmeans_out=CENTROIDS.fbin] [--kmeans_seed=1234]
//       [--kmeans_max_sample_bytes=134217728] [--kmeans_init=kmeans++|random]
//       [--kmeans_init_rows_per_centroid=8]
// trains k-means on the .fbin file (u32 n, u32 d, n*d float32) and prints
// one JSON line: wall seconds of TrainKMeans, sample rows, objective per
// iteration.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/timer.h"
#include "quant/pq/kmeans.h"
#include "quant/pq/pq_adc.h"
#include "quant/pq/pq_kernels.h"
#include "quant/pq/product_quantizer.h"
#include "quant/pq/rng.h"

namespace strata::quant {
namespace {

float Gaussian(Rng& rng) {
  double u1 = rng.Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) *
                            std::cos(6.283185307179586 * rng.Uniform()));
}

// Clustered rows (gen_synth.py recipe, condensed): 64 centres in a 32-dim
// latent space mapped to d dims, plus noise.
std::vector<float> Clustered(std::size_t n, std::size_t d, std::uint64_t seed) {
  constexpr std::size_t kLatent = 32, kClusters = 64;
  Rng rng(seed);
  std::vector<float> a(kLatent * d), centres(kClusters * kLatent);
  for (float& v : a) v = Gaussian(rng) / std::sqrt(static_cast<float>(kLatent));
  for (float& v : centres) v = 2.0f * Gaussian(rng);
  std::vector<float> x(n * d, 0.0f), z(kLatent);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = rng.Below(kClusters);
    for (std::size_t l = 0; l < kLatent; ++l) z[l] = centres[c * kLatent + l] + Gaussian(rng);
    for (std::size_t l = 0; l < kLatent; ++l) {
      for (std::size_t j = 0; j < d; ++j) x[i * d + j] += z[l] * a[l * d + j];
    }
    for (std::size_t j = 0; j < d; ++j) x[i * d + j] += 0.15f * Gaussian(rng);
  }
  return x;
}

struct PqFixture {
  std::vector<float> data;
  ProductQuantizer pq;
};

// Trained quantizers shared by the benchmarks of one (d, m).
const PqFixture& Fixture(std::size_t d, std::size_t m) {
  static std::map<std::pair<std::size_t, std::size_t>, std::unique_ptr<PqFixture>> cache;
  auto& slot = cache[{d, m}];
  if (!slot) {
    slot = std::make_unique<PqFixture>();
    slot->data = Clustered(20000, d, 42 + d);
    PqOptions opt;
    opt.m = m;
    opt.iterations = 5;
    auto pq = ProductQuantizer::Train(slot->data.data(), 20000, d, opt);
    if (!pq.ok()) {
      std::fprintf(stderr, "PQ training failed: %s\n", pq.status().ToString().c_str());
      std::abort();  // benchmark setup only; the library never aborts
    }
    slot->pq = std::move(pq).value();
  }
  return *slot;
}

void BM_PqEncode(benchmark::State& state) {
  const auto d = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const PqFixture& f = Fixture(d, m);
  const std::size_t n = 4096;
  std::vector<std::uint8_t> codes(n * m);
  for (auto _ : state) {
    if (!f.pq.Encode(f.data.data(), n, codes.data()).ok()) state.SkipWithError("encode");
    benchmark::DoNotOptimize(codes.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
}
BENCHMARK(BM_PqEncode)
    ->ArgNames({"d", "m"})
    ->Args({128, 16})
    ->Args({128, 32})
    ->Args({128, 64})
    ->Args({768, 96})
    ->Args({768, 192})
    ->Unit(benchmark::kMillisecond);

constexpr std::size_t kAdcCodes = 65536;

void BM_PqAdcBatch(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  const PqKernels* k = GetPqKernels(static_cast<kernels::Isa>(state.range(1)));
  if (k == nullptr) {
    state.SkipWithError("ISA not available on this CPU");
    return;
  }
  Rng rng(m);
  PqDistanceTable table;
  table.m = m;
  table.values.resize(m * kPqCentroids);
  for (float& v : table.values) v = static_cast<float>(rng.Uniform());
  std::vector<std::uint8_t> codes(kAdcCodes * m);
  for (auto& c : codes) c = static_cast<std::uint8_t>(rng.Next());
  constexpr std::size_t kBatch = 256;  // a posting-list chunk / candidate batch
  std::vector<float> out(kBatch);
  std::size_t at = 0;
  for (auto _ : state) {
    ComputeDistances(*k, table, codes.data() + at * m, kBatch, out.data());
    benchmark::DoNotOptimize(out.data());
    at += kBatch;
    if (at + kBatch > kAdcCodes) at = 0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBatch));
  state.SetLabel(std::string(kernels::IsaName(k->isa)));
}
void AdcArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"m", "isa"});
  for (int m : {16, 32, 64, 96, 192}) {
    for (int isa = 0; isa <= 2; ++isa) b->Args({m, isa});
  }
}
BENCHMARK(BM_PqAdcBatch)->Apply(AdcArgs);

void BM_PqAdcSingle(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  Rng rng(m);
  PqDistanceTable table;
  table.m = m;
  table.values.resize(m * kPqCentroids);
  for (float& v : table.values) v = static_cast<float>(rng.Uniform());
  std::vector<std::uint8_t> codes(kAdcCodes * m);
  for (auto& c : codes) c = static_cast<std::uint8_t>(rng.Next());
  std::size_t at = 0;
  float sum = 0;
  for (auto _ : state) {
    sum += ComputeDistance(table, codes.data() + at * m);
    if (++at == kAdcCodes) at = 0;
  }
  benchmark::DoNotOptimize(sum);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PqAdcSingle)->ArgName("m")->Arg(16)->Arg(32)->Arg(64)->Arg(96)->Arg(192);

void BM_PqDistanceTable(benchmark::State& state) {
  const auto d = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const PqFixture& f = Fixture(d, m);
  PqDistanceTable table;
  std::size_t q = 0;
  for (auto _ : state) {
    if (!f.pq.ComputeDistanceTable(f.data.data() + q * d, Metric::kL2, &table).ok()) {
      state.SkipWithError("table");
    }
    benchmark::DoNotOptimize(table.values.data());
    q = (q + 1) % 1000;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PqDistanceTable)
    ->ArgNames({"d", "m"})
    ->Args({128, 16})
    ->Args({128, 64})
    ->Args({768, 96})
    ->Args({768, 192});

void BM_KMeans(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto d = static_cast<std::size_t>(state.range(1));
  const auto k = static_cast<std::size_t>(state.range(2));
  static std::map<std::pair<std::size_t, std::size_t>, std::vector<float>> data_cache;
  auto& x = data_cache[{n, d}];
  if (x.empty()) x = Clustered(n, d, 7);
  KMeansOptions opt;
  opt.k = k;
  opt.iterations = 5;
  opt.threads = 2;
  for (auto _ : state) {
    auto res = TrainKMeans(x.data(), n, d, opt);
    if (!res.ok()) state.SkipWithError("kmeans");
    benchmark::DoNotOptimize(res);
  }
  // items = row-centroid distance evaluations of the Lloyd iterations
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n * k * 5));
}
BENCHMARK(BM_KMeans)
    ->ArgNames({"n", "d", "k"})
    ->Args({100000, 128, 256})
    ->Args({20000, 768, 256})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(2);

// ---- faiss comparison driver ----------------------------------------------

bool ReadFbin(const std::string& path, std::vector<float>* x, std::size_t* n, std::size_t* d) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  std::uint32_t hdr[2];
  bool ok = std::fread(hdr, 4, 2, f) == 2;
  if (ok) {
    *n = hdr[0];
    *d = hdr[1];
    x->resize(*n * *d);
    ok = std::fread(x->data(), 4, x->size(), f) == x->size();
  }
  std::fclose(f);
  return ok;
}

bool WriteFbin(const std::string& path, const std::vector<float>& x, std::size_t n,
               std::size_t d) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const std::uint32_t hdr[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(d)};
  bool ok = std::fwrite(hdr, 4, 2, f) == 2 && std::fwrite(x.data(), 4, x.size(), f) == x.size();
  ok = (std::fclose(f) == 0) && ok;
  return ok;
}

int RunKMeansDriver(const std::map<std::string, std::string>& flags) {
  auto get = [&](const char* name, const char* def) {
    auto it = flags.find(name);
    return it == flags.end() ? std::string(def) : it->second;
  };
  std::vector<float> x;
  std::size_t n = 0, d = 0;
  if (!ReadFbin(get("kmeans_fbin", ""), &x, &n, &d)) {
    std::fprintf(stderr, "cannot read %s\n", get("kmeans_fbin", "").c_str());
    return 1;
  }
  KMeansOptions opt;
  opt.k = std::stoul(get("kmeans_k", "1024"));
  opt.iterations = std::stoi(get("kmeans_iters", "20"));
  opt.threads = static_cast<unsigned>(std::stoul(get("kmeans_threads", "2")));
  opt.seed = std::stoull(get("kmeans_seed", "1234"));
  opt.max_sample_bytes = std::stoull(get("kmeans_max_sample_bytes", "134217728"));
  opt.init = get("kmeans_init", "kmeans++") == "random" ? KMeansInit::kRandomRows
                                                        : KMeansInit::kKMeansPlusPlus;
  opt.init_rows_per_centroid = std::stoul(get("kmeans_init_rows_per_centroid", "8"));
  Timer timer;
  auto res = TrainKMeans(x.data(), n, d, opt);
  const double seconds = timer.ElapsedSeconds();
  if (!res.ok()) {
    std::fprintf(stderr, "%s\n", res.status().ToString().c_str());
    return 1;
  }
  const std::string out = get("kmeans_out", "");
  if (!out.empty() && !WriteFbin(out, res->centroids, opt.k, d)) {
    std::fprintf(stderr, "cannot write %s\n", out.c_str());
    return 1;
  }
  std::printf("{\"seconds\": %.3f, \"n\": %zu, \"d\": %zu, \"k\": %zu, \"sample_rows\": %zu, "
              "\"iterations\": %zu, \"threads\": %u, \"repaired\": %zu, \"objective\": [",
              seconds, n, d, opt.k, res->sample_rows, res->objective.size(), opt.threads,
              res->empty_clusters_repaired);
  for (std::size_t i = 0; i < res->objective.size(); ++i) {
    std::printf("%s%.6g", i ? ", " : "", res->objective[i]);
  }
  std::printf("]}\n");
  return 0;
}

}  // namespace
}  // namespace strata::quant

int main(int argc, char** argv) {
  // --kmeans_* flags select the comparison driver instead of the benchmarks.
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a.rfind("--kmeans_", 0) != 0) continue;
    const auto eq = a.find('=');
    if (eq == std::string_view::npos) continue;
    flags[std::string(a.substr(2, eq - 2))] = std::string(a.substr(eq + 1));
  }
  if (flags.count("kmeans_fbin")) return strata::quant::RunKMeansDriver(flags);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
