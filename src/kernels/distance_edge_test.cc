// Edge cases of the distance kernels on every ISA: extreme integer values and
// dimensions whose sums overflow int32 (results must stay exact), cosine of
// self / opposite / zero vectors, NaN and Inf propagation, no reads past the
// end of a vector, and the documented bfloat16 subnormal behaviour.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/distance.h"
#include "kernels/distance_test_util.h"

namespace strata::kernels {
namespace {

using testing::AllKernels;
using testing::AvailableTables;
using testing::KernelRef;
using testing::Op;
using testing::RandomVector;

constexpr std::size_t kDims[] = {1, 3, 7, 15, 16, 17, 31, 33, 127, 128, 769, 1536};

std::int64_t ExactL2(const std::vector<int>& a, const std::vector<int>& b) {
  std::int64_t s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::int64_t{a[i] - b[i]} * (a[i] - b[i]);
  return s;
}
std::int64_t ExactIp(const std::vector<int>& a, const std::vector<int>& b) {
  std::int64_t s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += std::int64_t{a[i]} * b[i];
  return s;
}

// Integer kernels on constant vectors of extreme values, including
// dimensions (70001, 140001) where any int32 running sum would overflow.
TEST(DistanceEdge, ExtremeIntegerValuesAreExact) {
  struct Case {
    int a, b;
  };
  const Case u8_cases[] = {{255, 0}, {255, 255}, {0, 255}, {1, 254}};
  const Case i8_cases[] = {{-128, 127}, {-128, -128}, {127, -128}, {127, 127}, {-1, -128}};
  std::vector<std::size_t> dims(std::begin(kDims), std::end(kDims));
  dims.push_back(70001);
  dims.push_back(140001);
  for (const DistanceKernels* t : AvailableTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    for (std::size_t dim : dims) {
      for (const Case& c : u8_cases) {
        const std::vector<std::uint8_t> a(dim, static_cast<std::uint8_t>(c.a));
        const std::vector<std::uint8_t> b(dim, static_cast<std::uint8_t>(c.b));
        const std::vector<int> ia(dim, c.a), ib(dim, c.b);
        EXPECT_EQ(t->l2_u8(a.data(), b.data(), dim), static_cast<float>(ExactL2(ia, ib))) << dim;
        EXPECT_EQ(t->ip_u8(a.data(), b.data(), dim), static_cast<float>(ExactIp(ia, ib))) << dim;
        // Constant vectors are parallel; a zero vector has similarity 0.
        EXPECT_NEAR(t->cos_u8(a.data(), b.data(), dim), (c.a * c.b != 0) ? 1.0 : 0.0, 1e-7) << dim;
      }
      for (const Case& c : i8_cases) {
        const std::vector<std::int8_t> a(dim, static_cast<std::int8_t>(c.a));
        const std::vector<std::int8_t> b(dim, static_cast<std::int8_t>(c.b));
        const std::vector<int> ia(dim, c.a), ib(dim, c.b);
        EXPECT_EQ(t->l2_i8(a.data(), b.data(), dim), static_cast<float>(ExactL2(ia, ib))) << dim;
        EXPECT_EQ(t->ip_i8(a.data(), b.data(), dim), static_cast<float>(ExactIp(ia, ib))) << dim;
        EXPECT_NEAR(t->cos_i8(a.data(), b.data(), dim), (c.a * c.b > 0) ? 1.0 : -1.0, 1e-7) << dim;
      }
    }
  }
}

// Random integer vectors long enough to cross several int32 flush blocks.
TEST(DistanceEdge, LongRandomIntegerVectorsAreExact) {
  std::mt19937_64 rng(5);
  const std::size_t dim = 3 * 16384 + 77;
  for (const DistanceKernels* t : AvailableTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    const auto a = RandomVector(ElementType::kUint8, dim, rng);
    const auto b = RandomVector(ElementType::kUint8, dim, rng);
    std::vector<int> ua(a.begin(), a.end()), ub(b.begin(), b.end()), sa(dim), sb(dim);
    for (std::size_t i = 0; i < dim; ++i) {
      sa[i] = static_cast<std::int8_t>(a[i]);
      sb[i] = static_cast<std::int8_t>(b[i]);
    }
    const auto* ia = reinterpret_cast<const std::int8_t*>(a.data());
    const auto* ib = reinterpret_cast<const std::int8_t*>(b.data());
    EXPECT_EQ(t->l2_u8(a.data(), b.data(), dim), static_cast<float>(ExactL2(ua, ub)));
    EXPECT_EQ(t->ip_u8(a.data(), b.data(), dim), static_cast<float>(ExactIp(ua, ub)));
    EXPECT_EQ(t->l2_i8(ia, ib, dim), static_cast<float>(ExactL2(sa, sb)));
    EXPECT_EQ(t->ip_i8(ia, ib, dim), static_cast<float>(ExactIp(sa, sb)));
    const double cu = static_cast<double>(ExactIp(ua, ub)) /
                      std::sqrt(static_cast<double>(ExactIp(ua, ua)) * ExactIp(ub, ub));
    const double ci = static_cast<double>(ExactIp(sa, sb)) /
                      std::sqrt(static_cast<double>(ExactIp(sa, sa)) * ExactIp(sb, sb));
    EXPECT_EQ(t->cos_u8(a.data(), b.data(), dim), static_cast<float>(cu));
    EXPECT_EQ(t->cos_i8(ia, ib, dim), static_cast<float>(ci));
  }
}

// Writes value x (a float that every type can hold) as element i.
void Put(ElementType t, std::vector<std::uint8_t>& v, std::size_t i, float x) {
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
}

const ElementType kAllTypes[] = {ElementType::kFloat32, ElementType::kFloat16,
                                 ElementType::kBFloat16, ElementType::kUint8, ElementType::kInt8};

float CosineDistance(const DistanceKernels& t, ElementType type, const void* a, const void* b,
                     std::size_t dim) {
  return t.distance[static_cast<int>(Metric::kCosine)][static_cast<int>(type)](a, b, dim);
}

TEST(DistanceEdge, CosineOfSelfIsZeroAndOfOppositeIsTwo) {
  std::mt19937_64 rng(6);
  for (const DistanceKernels* t : AvailableTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    for (ElementType type : kAllTypes) {
      for (std::size_t dim : kDims) {
        auto a = RandomVector(type, dim, rng);
        if (type == ElementType::kInt8) {  // -128 has no opposite
          for (auto& byte : a) byte = byte == 0x80 ? 0x81 : byte;
        }
        if (type == ElementType::kUint8) a[0] = 7;  // not the zero vector
        const bool is_float = !testing::IsInteger(type);
        // Float parts go through identical arithmetic, so the result is exact;
        // integer norms above 2^26 make |a|^2 |a|^2 round in double.
        const double tol = is_float ? 0.0 : 1e-7;
        EXPECT_NEAR(CosineDistance(*t, type, a.data(), a.data(), dim), 0.0, tol)
            << ElementTypeName(type) << " dim=" << dim;
        if (type == ElementType::kUint8) continue;  // unsigned vectors have no opposite
        std::vector<std::uint8_t> neg(a.size());
        for (std::size_t i = 0; i < dim; ++i)
          Put(type, neg, i, -static_cast<float>(testing::ElementValue(type, a.data(), i)));
        EXPECT_NEAR(CosineDistance(*t, type, a.data(), neg.data(), dim), 2.0, tol)
            << ElementTypeName(type) << " dim=" << dim;
      }
    }
  }
}

TEST(DistanceEdge, CosineWithZeroVectorIsOne) {
  std::mt19937_64 rng(7);
  for (const DistanceKernels* t : AvailableTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    for (ElementType type : kAllTypes) {
      for (std::size_t dim : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{128}}) {
        auto a = RandomVector(type, dim, rng);
        if (dim > 0) Put(type, a, 0, 5.0f);  // surely nonzero
        const std::vector<std::uint8_t> zero(dim * ElementSize(type), 0);
        EXPECT_EQ(CosineDistance(*t, type, a.data(), zero.data(), dim), 1.0f);
        EXPECT_EQ(CosineDistance(*t, type, zero.data(), a.data(), dim), 1.0f);
        EXPECT_EQ(CosineDistance(*t, type, zero.data(), zero.data(), dim), 1.0f);
      }
    }
  }
}

// Orthogonal unsigned vectors (disjoint supports) are exactly 1 apart.
TEST(DistanceEdge, CosineOfOrthogonalVectorsIsOne) {
  for (const DistanceKernels* t : AvailableTables()) {
    for (ElementType type : kAllTypes) {
      const std::size_t dim = 77;
      std::vector<std::uint8_t> a(dim * ElementSize(type), 0), b(a.size(), 0);
      for (std::size_t i = 0; i < dim; ++i)
        Put(type, (i % 2 ? a : b), i, static_cast<float>(1 + i % 5));
      EXPECT_EQ(CosineDistance(*t, type, a.data(), b.data(), dim), 1.0f) << ElementTypeName(type);
    }
  }
}

TEST(DistanceEdge, NanAndInfPropagate) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const DistanceKernels* t : AvailableTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    for (ElementType type :
         {ElementType::kFloat32, ElementType::kFloat16, ElementType::kBFloat16}) {
      for (std::size_t dim : {std::size_t{1}, std::size_t{19}, std::size_t{130}}) {
        std::vector<std::uint8_t> a(dim * ElementSize(type), 0), b(a.size(), 0);
        for (std::size_t i = 0; i < dim; ++i) {
          Put(type, a, i, 1.0f);
          Put(type, b, i, 2.0f);
        }
        Put(type, a, dim - 1, nan);
        for (std::size_t m = 0; m < kNumMetrics; ++m) {
          EXPECT_TRUE(std::isnan(t->distance[m][static_cast<int>(type)](a.data(), b.data(), dim)))
              << ElementTypeName(type) << " metric " << m << " dim " << dim;
        }
        Put(type, a, dim - 1, inf);
        EXPECT_EQ(t->distance[0][static_cast<int>(type)](a.data(), b.data(), dim), inf);
        EXPECT_EQ(t->distance[1][static_cast<int>(type)](a.data(), b.data(), dim), -inf);
      }
    }
  }
}

// Places each vector so that it ends exactly at an inaccessible page: a kernel
// that reads even one byte past the end (e.g. a full-width load in the tail)
// crashes here, whatever the sanitizer sees.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t bytes) {
    page_ = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    data_pages_ = (bytes + page_ - 1) / page_ + 1;
    map_size_ = (data_pages_ + 1) * page_;
    void* p = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    base_ = static_cast<std::uint8_t*>(p);
    if (mprotect(base_ + data_pages_ * page_, page_, PROT_NONE) != 0) {
      munmap(base_, map_size_);
      base_ = nullptr;
    }
  }
  ~GuardedBuffer() {
    if (base_ != nullptr) munmap(base_, map_size_);
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;
  bool ok() const { return base_ != nullptr; }
  // Copies `bytes` so they end at the guard page; returns the copy.
  const std::uint8_t* PlaceAtEnd(const std::vector<std::uint8_t>& bytes) {
    std::uint8_t* dst = base_ + data_pages_ * page_ - bytes.size();
    std::memcpy(dst, bytes.data(), bytes.size());
    return dst;
  }

 private:
  std::size_t page_ = 0, data_pages_ = 0, map_size_ = 0;
  std::uint8_t* base_ = nullptr;
};

TEST(DistanceEdge, NoReadsPastTheEnd) {
  std::mt19937_64 rng(8);
  GuardedBuffer ga(8192), gb(8192);
  ASSERT_TRUE(ga.ok() && gb.ok());
  const DistanceKernels* scalar = GetKernels(Isa::kScalar);
  for (const DistanceKernels* t : AvailableTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    for (const KernelRef& k : AllKernels()) {
      for (std::size_t dim = 1; dim <= 200; dim += (dim < 70 ? 1 : 13)) {
        const auto a = RandomVector(k.a_type, dim, rng);
        const auto b = RandomVector(k.b_type, dim, rng);
        const float got = k.call(*t, ga.PlaceAtEnd(a), gb.PlaceAtEnd(b), dim);
        const float want = k.call(*scalar, a.data(), b.data(), dim);
        if (testing::IsExact(k)) {
          EXPECT_EQ(got, want) << k.name << " dim " << dim;
        } else {
          EXPECT_NEAR(got, want, 1e-3 * (1 + std::fabs(want))) << k.name << " dim " << dim;
        }
      }
    }
  }
}

// bfloat16 subnormals: kept by every kernel except the AVX-512 inner product
// and cosine (VDPBF16PS treats them as zero), as documented in distance.h.
TEST(DistanceEdge, BFloat16SubnormalsBehaveAsDocumented) {
  const std::size_t dim = 40;
  const std::vector<std::uint16_t> a(dim, 0x0040);  // 2^-127, a subnormal
  const std::vector<std::uint16_t> b(dim, FloatToBFloat16(0x1p100f));
  const float sub = BFloat16ToFloat(0x0040);
  ASSERT_GT(sub, 0.0f);
  ASSERT_LT(sub, 0x1p-126f);
  for (const DistanceKernels* t : AvailableTables()) {
    SCOPED_TRACE(IsaName(t->isa));
    const float ip = t->ip_bf16(a.data(), b.data(), dim);
    const float kept = static_cast<float>(dim) * sub * 0x1p100f;
    if (t->isa == Isa::kAvx512) {
      EXPECT_EQ(ip, 0.0f);
    } else {
      EXPECT_NEAR(ip, kept, kept * 1e-6);
    }
    // Mixed float32 x bfloat16 converts instead, so it keeps them everywhere.
    const std::vector<float> af(dim, 0x1p100f);
    EXPECT_NEAR(t->ip_f32_bf16(af.data(), a.data(), dim), kept, kept * 1e-6);
  }
}

}  // namespace
}  // namespace strata::kernels
