// Micro-benchmarks of the distance kernels: every (ISA available on this CPU)
// x (metric) x (element type) x (dimension) through the type-erased
// "smaller is nearer" table that indexes call, plus the mixed-precision
// float32-query kernels. One item = one distance computation, so items/s is
// distances per second; bytes/s counts both operand vectors.
//
// The operands cycle through a pool of vectors that fits in L1 (~32 KiB), so
// this measures the kernel, not memory bandwidth.
//
//   kernels_bench [--benchmark_min_time=0.05] [--benchmark_filter=avx512/l2]
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/distance.h"
#include "strata/distance.h"
#include "strata/types.h"

namespace strata::kernels {
namespace {

constexpr std::size_t kDims[] = {96, 128, 768, 1536};
constexpr std::size_t kPoolBytes = 32 * 1024;

// `count` random vectors of `dim` elements of `type`, back to back.
std::vector<std::uint8_t> RandomPool(ElementType type, std::size_t dim, std::size_t count,
                                     std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::size_t n = dim * count;
  std::vector<std::uint8_t> out(n * ElementSize(type));
  for (std::size_t i = 0; i < n; ++i) {
    switch (type) {
      case ElementType::kFloat32: {
        const float f = normal(rng);
        std::memcpy(out.data() + 4 * i, &f, 4);
        break;
      }
      case ElementType::kFloat16:
      case ElementType::kBFloat16: {
        const float f = normal(rng);
        const std::uint16_t h = type == ElementType::kFloat16 ? FloatToHalf(f) : FloatToBFloat16(f);
        std::memcpy(out.data() + 2 * i, &h, 2);
        break;
      }
      case ElementType::kUint8:
      case ElementType::kInt8:
        out[i] = static_cast<std::uint8_t>(rng());
        break;
    }
  }
  return out;
}

// Number of (a, b) vector pairs kept in the pool for `bytes_per_pair`.
std::size_t PoolPairs(std::size_t bytes_per_pair) {
  const std::size_t n = kPoolBytes / bytes_per_pair;
  return n < 2 ? 2 : (n > 64 ? 64 : n);
}

template <typename Fn>
void RunPairs(benchmark::State& state, Fn&& fn, const std::vector<std::uint8_t>& a,
              std::size_t a_bytes, const std::vector<std::uint8_t>& b, std::size_t b_bytes,
              std::size_t pairs) {
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(fn(a.data() + i * a_bytes, b.data() + i * b_bytes));
    if (++i == pairs) i = 0;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (a_bytes + b_bytes)));
}

// "isa/metric/type/dim".
std::string BenchName(Isa isa, std::string_view metric, std::string_view type, std::size_t dim) {
  std::string name(IsaName(isa));
  for (std::string_view part : {metric, type}) name.append("/").append(part);
  return name.append("/").append(std::to_string(dim));
}

void RegisterSameType(const DistanceKernels* table, Metric metric, ElementType type,
                      std::size_t dim) {
  const std::string name = BenchName(table->isa, MetricName(metric), ElementTypeName(type), dim);
  const ErasedDistanceFn fn =
      table->distance[static_cast<std::size_t>(metric)][static_cast<std::size_t>(type)];
  benchmark::RegisterBenchmark(name.c_str(), [fn, type, dim](benchmark::State& state) {
    const std::size_t bytes = dim * ElementSize(type);
    const std::size_t pairs = PoolPairs(2 * bytes);
    const auto a = RandomPool(type, dim, pairs, 1);
    const auto b = RandomPool(type, dim, pairs, 2);
    RunPairs(
        state, [fn, dim](const void* x, const void* y) { return fn(x, y, dim); }, a, bytes, b,
        bytes, pairs);
  });
}

// Mixed precision: a float32 query against compressed data (typed kernel
// `kMember` of the table, data elements TB).
template <auto kMember, typename TB>
void RegisterMixed(const DistanceKernels* table, const char* op, ElementType data_type,
                   std::size_t dim) {
  const std::string type = "float32x" + std::string(ElementTypeName(data_type));
  const std::string name = BenchName(table->isa, op, type, dim);
  const auto fn = table->*kMember;
  benchmark::RegisterBenchmark(name.c_str(), [fn, data_type, dim](benchmark::State& state) {
    const std::size_t a_bytes = dim * 4, b_bytes = dim * ElementSize(data_type);
    const std::size_t pairs = PoolPairs(a_bytes + b_bytes);
    const auto a = RandomPool(ElementType::kFloat32, dim, pairs, 3);
    const auto b = RandomPool(data_type, dim, pairs, 4);
    RunPairs(
        state,
        [fn, dim](const void* x, const void* y) {
          return fn(static_cast<const float*>(x), static_cast<const TB*>(y), dim);
        },
        a, a_bytes, b, b_bytes, pairs);
  });
}

void RegisterAll() {
  for (int i = 0; i < kNumIsas; ++i) {
    const DistanceKernels* table = GetKernels(static_cast<Isa>(i));
    if (table == nullptr) continue;
    for (Metric metric : {Metric::kL2, Metric::kInnerProduct, Metric::kCosine}) {
      for (ElementType type : {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16,
                               ElementType::kUint8, ElementType::kInt8}) {
        for (std::size_t dim : kDims) RegisterSameType(table, metric, type, dim);
      }
    }
    using D = DistanceKernels;
    for (std::size_t dim : kDims) {
      RegisterMixed<&D::l2_f32_f16, std::uint16_t>(table, "l2", ElementType::kFloat16, dim);
      RegisterMixed<&D::ip_f32_f16, std::uint16_t>(table, "ip", ElementType::kFloat16, dim);
      RegisterMixed<&D::l2_f32_bf16, std::uint16_t>(table, "l2", ElementType::kBFloat16, dim);
      RegisterMixed<&D::ip_f32_bf16, std::uint16_t>(table, "ip", ElementType::kBFloat16, dim);
      RegisterMixed<&D::l2_f32_u8, std::uint8_t>(table, "l2", ElementType::kUint8, dim);
      RegisterMixed<&D::ip_f32_u8, std::uint8_t>(table, "ip", ElementType::kUint8, dim);
      RegisterMixed<&D::l2_f32_i8, std::int8_t>(table, "l2", ElementType::kInt8, dim);
      RegisterMixed<&D::ip_f32_i8, std::int8_t>(table, "ip", ElementType::kInt8, dim);
    }
  }
}

}  // namespace
}  // namespace strata::kernels

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("strata_active_isa", std::string(strata::ActiveIsaName()));
  strata::kernels::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
