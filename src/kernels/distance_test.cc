// Every compiled kernel on this CPU against the scalar reference, and the
// scalar reference against a naive double-precision loop, on random inputs
// over odd and even dimensions and unaligned pointers.
#include "kernels/distance.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/distance_test_util.h"

namespace strata::kernels {
namespace {

using testing::AllKernels;
using testing::AvailableTables;
using testing::FloatTolerance;
using testing::IsExact;
using testing::KernelRef;
using testing::NaiveReference;
using testing::Op;
using testing::RandomVector;
using testing::Reference;

constexpr std::size_t kDims[] = {0, 1, 3, 7, 15, 16, 17, 31, 33, 127, 128, 769, 1536};

// Exact value a kernel must return for integer inputs: the integer result
// rounded once to float (or, for cosine, the similarity of the exact parts).
float ExactExpected(const Reference& r) { return static_cast<float>(r.value); }

void ExpectMatchesReference(const KernelRef& k, float got, const Reference& ref, std::size_t dim,
                            const char* what) {
  if (IsExact(k)) {
    if (k.op == Op::kCos) {
      EXPECT_NEAR(got, ref.value, 1e-6) << what << " " << k.name << " dim=" << dim;
    } else {
      EXPECT_EQ(got, ExactExpected(ref)) << what << " " << k.name << " dim=" << dim;
    }
  } else {
    EXPECT_NEAR(got, ref.value, FloatTolerance(ref, dim))
        << what << " " << k.name << " dim=" << dim;
  }
}

TEST(DistanceKernels, ScalarMatchesDoublePrecisionLoop) {
  const DistanceKernels* scalar = GetKernels(Isa::kScalar);
  ASSERT_NE(scalar, nullptr);
  std::mt19937_64 rng(1);
  for (const KernelRef& k : AllKernels()) {
    for (std::size_t dim : kDims) {
      for (int rep = 0; rep < 3; ++rep) {
        const auto a = RandomVector(k.a_type, dim, rng);
        const auto b = RandomVector(k.b_type, dim, rng);
        const Reference ref = NaiveReference(k.op, k.a_type, k.b_type, a.data(), b.data(), dim);
        ExpectMatchesReference(k, k.call(*scalar, a.data(), b.data(), dim), ref, dim, "scalar");
      }
    }
  }
}

TEST(DistanceKernels, EveryIsaMatchesScalarOnRandomInputs) {
  const DistanceKernels* scalar = GetKernels(Isa::kScalar);
  std::mt19937_64 rng(2);
  for (const DistanceKernels* table : AvailableTables()) {
    SCOPED_TRACE(IsaName(table->isa));
    for (const KernelRef& k : AllKernels()) {
      for (std::size_t dim : kDims) {
        for (int rep = 0; rep < 3; ++rep) {
          const auto a = RandomVector(k.a_type, dim, rng);
          const auto b = RandomVector(k.b_type, dim, rng);
          const float want = k.call(*scalar, a.data(), b.data(), dim);
          const float got = k.call(*table, a.data(), b.data(), dim);
          if (IsExact(k)) {
            EXPECT_EQ(got, want) << k.name << " dim=" << dim;
          } else {
            const Reference ref = NaiveReference(k.op, k.a_type, k.b_type, a.data(), b.data(), dim);
            EXPECT_NEAR(got, want, 2 * FloatTolerance(ref, dim)) << k.name << " dim=" << dim;
            ExpectMatchesReference(k, got, ref, dim, IsaName(table->isa).data());
          }
        }
      }
    }
  }
}

// Vectors starting at every offset within a cache line (in whole elements:
// a float at an odd byte address is undefined behaviour for the scalar code).
TEST(DistanceKernels, UnalignedPointers) {
  const DistanceKernels* scalar = GetKernels(Isa::kScalar);
  std::mt19937_64 rng(3);
  for (const DistanceKernels* table : AvailableTables()) {
    SCOPED_TRACE(IsaName(table->isa));
    for (const KernelRef& k : AllKernels()) {
      const std::size_t esa = ElementSize(k.a_type), esb = ElementSize(k.b_type);
      for (std::size_t dim : {std::size_t{33}, std::size_t{130}}) {
        const auto a = RandomVector(k.a_type, dim + 64, rng);
        const auto b = RandomVector(k.b_type, dim + 64, rng);
        for (std::size_t off = 0; off < 64 / esa; off += 1 + (esa == 1 ? 2 : 0)) {
          const std::uint8_t* pa = a.data() + off * esa;
          const std::uint8_t* pb = b.data() + ((off * 7) % (64 / esb)) * esb;
          // Reference on aligned copies of the same data.
          std::vector<std::uint8_t> ca(pa, pa + dim * esa), cb(pb, pb + dim * esb);
          const float want = k.call(*scalar, ca.data(), cb.data(), dim);
          const float got = k.call(*table, pa, pb, dim);
          if (IsExact(k)) {
            EXPECT_EQ(got, want) << k.name << " offset " << off;
          } else {
            const Reference ref =
                NaiveReference(k.op, k.a_type, k.b_type, ca.data(), cb.data(), dim);
            EXPECT_NEAR(got, want, 2 * FloatTolerance(ref, dim)) << k.name << " offset " << off;
          }
        }
      }
    }
  }
}

// A single nonzero element at each position: any lane, unroll or tail slip
// shows up as an exactly wrong answer.
TEST(DistanceKernels, SingleElementAtEveryPosition) {
  for (const DistanceKernels* table : AvailableTables()) {
    SCOPED_TRACE(IsaName(table->isa));
    for (const KernelRef& k : AllKernels()) {
      for (std::size_t dim : {std::size_t{1}, std::size_t{37}, std::size_t{150}}) {
        std::vector<std::uint8_t> a(dim * ElementSize(k.a_type), 0);
        std::vector<std::uint8_t> b(dim * ElementSize(k.b_type), 0);
        // Value 3 in a and -2 (or 2 for unsigned) in b, encoded per type.
        const auto put = [](ElementType t, std::vector<std::uint8_t>& v, std::size_t i, float x) {
          switch (t) {
            case ElementType::kFloat32:
              std::memcpy(v.data() + 4 * i, &x, 4);
              break;
            case ElementType::kFloat16: {
              const std::uint16_t h = FloatToHalf(x);
              std::memcpy(v.data() + 2 * i, &h, 2);
              break;
            }
            case ElementType::kBFloat16: {
              const std::uint16_t h = FloatToBFloat16(x);
              std::memcpy(v.data() + 2 * i, &h, 2);
              break;
            }
            case ElementType::kUint8:
              v[i] = static_cast<std::uint8_t>(x);
              break;
            case ElementType::kInt8:
              v[i] = static_cast<std::uint8_t>(static_cast<std::int8_t>(x));
              break;
          }
        };
        const float y = k.b_type == ElementType::kUint8 ? 2.0f : -2.0f;
        for (std::size_t pos = 0; pos < dim; ++pos) {
          std::fill(a.begin(), a.end(), 0);
          std::fill(b.begin(), b.end(), 0);
          put(k.a_type, a, pos, 3.0f);
          put(k.b_type, b, pos, y);
          const float got = k.call(*table, a.data(), b.data(), dim);
          const float want = k.op == Op::kL2   ? (3.0f - y) * (3.0f - y)
                             : k.op == Op::kIp ? 3.0f * y
                                               : (y > 0 ? 1.0f : -1.0f);
          ASSERT_EQ(got, want) << k.name << " dim=" << dim << " pos=" << pos;
        }
      }
    }
  }
}

// The type-erased "smaller is nearer" table agrees with the typed kernels.
TEST(DistanceKernels, ErasedDistanceTable) {
  std::mt19937_64 rng(4);
  const ElementType types[] = {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16,
                               ElementType::kUint8, ElementType::kInt8};
  for (const DistanceKernels* table : AvailableTables()) {
    SCOPED_TRACE(IsaName(table->isa));
    for (const KernelRef& k : AllKernels()) {
      if (k.a_type != k.b_type) continue;
      const Metric metric = k.op == Op::kL2   ? Metric::kL2
                            : k.op == Op::kIp ? Metric::kInnerProduct
                                              : Metric::kCosine;
      const ErasedDistanceFn fn =
          table->distance[static_cast<int>(metric)][static_cast<int>(k.a_type)];
      ASSERT_NE(fn, nullptr) << k.name;
      for (std::size_t dim : {std::size_t{5}, std::size_t{100}}) {
        const auto a = RandomVector(k.a_type, dim, rng);
        const auto b = RandomVector(k.a_type, dim, rng);
        const float raw = k.call(*table, a.data(), b.data(), dim);
        const float dist = fn(a.data(), b.data(), dim);
        // Cosine distance is 1 - similarity in double, rounded once.
        const double want = k.op == Op::kL2 ? raw : k.op == Op::kIp ? -raw : 1.0 - raw;
        EXPECT_NEAR(dist, want, k.op == Op::kCos ? 2e-7 : 0.0) << k.name;
      }
    }
    for (ElementType t : types) {
      for (std::size_t m = 0; m < kNumMetrics; ++m) {
        EXPECT_NE(table->distance[m][static_cast<int>(t)], nullptr);
      }
    }
  }
}

TEST(DistanceKernels, EveryTableEntryIsSet) {
  for (const DistanceKernels* table : AvailableTables()) {
    for (const KernelRef& k : AllKernels()) {
      // Calling with dim 0 must work and touch nothing.
      EXPECT_EQ(k.call(*table, nullptr, nullptr, 0), 0.0f) << IsaName(table->isa) << " " << k.name;
    }
  }
}

}  // namespace
}  // namespace strata::kernels
