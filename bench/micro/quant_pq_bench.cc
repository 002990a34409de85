// Micro-benchmarks of k-means and product quantization.
//
//   PqEncode/d/m          rows encoded per second (items/s, wall clock), all
//                         threads
//   PqEncodeOneRow/d/m/direct  one row at a time on one thread, as an insert
//                         encodes: direct=0 the batched sgemm path
//                         (EncodeRows), direct=1 the few-row path
//                         (EncodeFewRows) that Encode takes for n < 8
//   PqAdcBatch/m          ADC distance estimates per second over batches of
//                         256 codes (items/s = codes scored)
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
//       [--kmeans_init_rows_per_centroid=8] [--kmeans_hierarchical=0|1]
// trains k-means on the .fbin file (u32 n, u32 d, n*d float32) and prints
// one JSON line: wall seconds of TrainKMeans, sample rows, objective per
// iteration.
//   quant_pq_bench --pq_fbin=BASE.fbin --pq_query=Q.fbin --pq_gt=GT.ibin
//       [--pq_m=32] [--pq_opq=0] [--pq_threads=2] [--pq_queries=200]
// trains PQ (OPQ with --pq_opq=N alternations) on the base, encodes all of
// it and prints train/encode/scan seconds and PQ-only recall@10.
// --kmeans_hierarchical=1 runs TrainHierarchicalKMeans instead
// (sqrt(k) coarse clusters) and reports its objective and the exact flat
// objective of its centroids on the sample.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "base/timer.h"
#include "quant/pq/hierarchical_kmeans.h"
#include "quant/pq/kmeans.h"
#include "quant/pq/pq_adc.h"
#include "quant/pq/pq_kernels.h"
#include "quant/pq/pq_training.h"
#include "quant/pq/product_quantizer.h"

namespace strata::quant {
namespace {

float Gaussian(Xoshiro256& rng) {
  double u1 = rng.Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) *
                            std::cos(6.283185307179586 * rng.Uniform()));
}

// Clustered rows (gen_synth.py recipe, condensed): 64 centres in a 32-dim
// latent space mapped to d dims, plus noise.
std::vector<float> Clustered(std::size_t n, std::size_t d, std::uint64_t seed) {
  constexpr std::size_t kLatent = 32, kClusters = 64;
  Xoshiro256 rng(seed);
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
    ->Args({128, 8})
    ->Args({128, 16})
    ->Args({128, 32})
    ->Args({128, 64})
    ->Args({768, 96})
    ->Args({768, 192})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();  // encoding runs on all threads: wall-clock throughput

constexpr std::size_t kAdcCodes = 65536;

void BM_PqEncodeOneRow(benchmark::State& state) {
  const auto d = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  const bool direct = state.range(2) != 0;
  const PqFixture& f = Fixture(d, m);
  const std::size_t rows = 1024;
  std::vector<std::uint8_t> code(m);
  std::size_t r = 0;
  for (auto _ : state) {
    const float* x = f.data.data() + (r++ % rows) * d;
    if (direct) {
      internal::EncodeFewRows(x, 1, d, f.pq.offsets(), f.pq.centroids(), code.data());
    } else {
      internal::EncodeRows(x, 1, d, f.pq.offsets(), f.pq.centroids(), 1, code.data());
    }
    benchmark::DoNotOptimize(code.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_PqEncodeOneRow)
    ->ArgNames({"d", "m", "direct"})
    ->Args({128, 32, 0})
    ->Args({128, 32, 1})
    ->Args({768, 96, 0})
    ->Args({768, 96, 1});

void BM_PqAdcBatch(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  const PqKernels* k = &BestPqKernels();
  Xoshiro256 rng(m);
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
BENCHMARK(BM_PqAdcBatch)->ArgName("m")->Arg(8)->Arg(16)->Arg(32)->Arg(64)->Arg(96)->Arg(192);

void BM_PqAdcSingle(benchmark::State& state) {
  const auto m = static_cast<std::size_t>(state.range(0));
  Xoshiro256 rng(m);
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
BENCHMARK(BM_PqAdcSingle)->ArgName("m")->Arg(8)->Arg(16)->Arg(32)->Arg(64)->Arg(96)->Arg(192);

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
    ->Iterations(2)
    ->UseRealTime();

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

bool WriteFbin(const std::string& path, const std::vector<float>& x, std::size_t n, std::size_t d) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  const std::uint32_t hdr[2] = {static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(d)};
  bool ok = std::fwrite(hdr, 4, 2, f) == 2 && std::fwrite(x.data(), 4, x.size(), f) == x.size();
  ok = (std::fclose(f) == 0) && ok;
  return ok;
}

// PQ end-to-end on a real corpus: train, encode everything, then PQ-only
// ranking recall@10 against the ground truth of the first `queries` queries.
int RunPqDriver(const std::map<std::string, std::string>& flags) {
  auto get = [&](const char* name, const char* def) {
    auto it = flags.find(name);
    return it == flags.end() ? std::string(def) : it->second;
  };
  std::vector<float> base, queries;
  std::size_t n = 0, d = 0, nq = 0, dq = 0;
  if (!ReadFbin(get("pq_fbin", ""), &base, &n, &d) ||
      !ReadFbin(get("pq_query", ""), &queries, &nq, &dq) || dq != d) {
    std::fprintf(stderr, "cannot read --pq_fbin / --pq_query (or dims differ)\n");
    return 1;
  }
  std::FILE* f = std::fopen(get("pq_gt", "").c_str(), "rb");
  std::uint32_t gt_hdr[2] = {0, 0};
  std::vector<std::uint32_t> gt;
  if (f == nullptr || std::fread(gt_hdr, 4, 2, f) != 2) {
    std::fprintf(stderr, "cannot read --pq_gt\n");
    if (f) std::fclose(f);
    return 1;
  }
  gt.resize(std::size_t{gt_hdr[0]} * gt_hdr[1]);
  const bool gt_ok = std::fread(gt.data(), 4, gt.size(), f) == gt.size();
  std::fclose(f);
  if (!gt_ok || gt_hdr[1] < 10) {
    std::fprintf(stderr, "bad ground truth\n");
    return 1;
  }
  PqOptions opt;
  opt.m = std::stoul(get("pq_m", "32"));
  opt.opq_iterations = std::stoi(get("pq_opq", "0"));
  opt.threads = static_cast<unsigned>(std::stoul(get("pq_threads", "2")));
  const std::size_t use_q =
      std::min<std::size_t>({nq, gt_hdr[0], std::stoul(get("pq_queries", "200"))});
  Timer timer;
  auto pq = ProductQuantizer::Train(base.data(), n, d, opt);
  const double train_s = timer.ElapsedSeconds();
  if (!pq.ok()) {
    std::fprintf(stderr, "%s\n", pq.status().ToString().c_str());
    return 1;
  }
  std::vector<std::uint8_t> codes(n * opt.m);
  timer.Reset();
  if (!pq->Encode(base.data(), n, codes.data(), opt.threads).ok()) return 1;
  const double encode_s = timer.ElapsedSeconds();
  PqDistanceTable table;
  std::vector<float> est(n);
  std::vector<std::uint32_t> idx(n);
  double hits = 0;
  timer.Reset();
  for (std::size_t q = 0; q < use_q; ++q) {
    if (!pq->ComputeDistanceTable(queries.data() + q * d, Metric::kL2, &table).ok()) return 1;
    ComputeDistances(table, codes.data(), n, est.data());
    for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint32_t>(i);
    std::partial_sort(idx.begin(), idx.begin() + 10, idx.end(),
                      [&](std::uint32_t a, std::uint32_t b) { return est[a] < est[b]; });
    for (int i = 0; i < 10; ++i) {
      for (int j = 0; j < 10; ++j) hits += idx[i] == gt[q * gt_hdr[1] + j];
    }
  }
  const double scan_s = timer.ElapsedSeconds();
  std::printf(
      "{\"n\": %zu, \"d\": %zu, \"m\": %zu, \"opq_iterations\": %d, \"train_s\": %.3f, "
      "\"encode_s\": %.3f, \"queries\": %zu, \"scan_s\": %.3f, \"recall_at_10\": %.4f}\n",
      n, d, opt.m, opt.opq_iterations, train_s, encode_s, use_q, scan_s, hits / (10.0 * use_q));
  return 0;
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
  if (get("kmeans_hierarchical", "0") == "1") {
    Timer timer;
    auto h = TrainHierarchicalKMeans(x.data(), n, d, opt);
    const double seconds = timer.ElapsedSeconds();
    if (!h.ok()) {
      std::fprintf(stderr, "%s\n", h.status().ToString().c_str());
      return 1;
    }
    auto flat =
        KMeansObjective(x.data(), h->sample_rows, d, h->centroids.data(), opt.k, opt.threads);
    std::printf(
        "{\"seconds\": %.3f, \"n\": %zu, \"d\": %zu, \"k\": %zu, \"coarse_k\": %zu, "
        "\"sample_rows\": %zu, \"objective\": %.6g, \"flat_objective_first_rows\": "
        "%.6g}\n",
        seconds, n, d, opt.k, h->coarse_k(), h->sample_rows, h->objective,
        flat.ok() ? *flat : -1.0);
    return 0;
  }
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
  std::printf(
      "{\"seconds\": %.3f, \"n\": %zu, \"d\": %zu, \"k\": %zu, \"sample_rows\": %zu, "
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
  // --kmeans_* / --pq_* flags select a driver instead of the benchmarks.
  std::map<std::string, std::string> flags;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a(argv[i]);
    if (a.rfind("--kmeans_", 0) != 0 && a.rfind("--pq_", 0) != 0) continue;
    const auto eq = a.find('=');
    if (eq == std::string_view::npos) continue;
    flags[std::string(a.substr(2, eq - 2))] = std::string(a.substr(eq + 1));
  }
  if (flags.count("kmeans_fbin")) return strata::quant::RunKMeansDriver(flags);
  if (flags.count("pq_fbin")) return strata::quant::RunPqDriver(flags);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
