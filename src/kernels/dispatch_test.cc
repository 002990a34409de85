// ISA detection and the STRATA_ISA cap.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kernels/distance.h"

namespace strata::kernels {
namespace {

// Sets STRATA_ISA for one scope and restores the previous value.
class ScopedIsaEnv {
 public:
  explicit ScopedIsaEnv(const char* value) {
    if (const char* old = std::getenv("STRATA_ISA")) {
      had_old_ = true;
      old_ = old;
    }
    if (value != nullptr) {
      setenv("STRATA_ISA", value, 1);
    } else {
      unsetenv("STRATA_ISA");
    }
  }
  ~ScopedIsaEnv() {
    if (had_old_) {
      setenv("STRATA_ISA", old_.c_str(), 1);
    } else {
      unsetenv("STRATA_ISA");
    }
  }

 private:
  bool had_old_ = false;
  std::string old_;
};

TEST(Dispatch, IsaNames) {
  EXPECT_EQ(IsaName(Isa::kScalar), "scalar");
  EXPECT_EQ(IsaName(Isa::kAvx2), "avx2");
  EXPECT_EQ(IsaName(Isa::kAvx512), "avx512");
}

// Cross-checks CPUID + XCR0 detection against GCC's independent runtime
// (libgcc's __builtin_cpu_supports, which also checks the OS-enabled state).
TEST(Dispatch, HardwareIsaAgreesWithCompilerRuntime) {
#if defined(STRATA_KERNELS_HAVE_X86)
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                    __builtin_cpu_supports("f16c") && __builtin_cpu_supports("bmi2") &&
                    __builtin_cpu_supports("popcnt");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
                      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni") &&
                      __builtin_cpu_supports("avx512vpopcntdq") &&
                      __builtin_cpu_supports("avx512bf16");
  const Isa expected = avx512 ? Isa::kAvx512 : (avx2 ? Isa::kAvx2 : Isa::kScalar);
  EXPECT_EQ(HardwareIsa(), expected);
#else
  EXPECT_EQ(HardwareIsa(), Isa::kScalar);
#endif
}

TEST(Dispatch, TablesExistUpToTheHardwareIsa) {
  for (int i = 0; i < kNumIsas; ++i) {
    const Isa isa = static_cast<Isa>(i);
    const DistanceKernels* k = GetKernels(isa);
    if (isa <= HardwareIsa()) {
      ASSERT_NE(k, nullptr) << IsaName(isa);
      EXPECT_EQ(k->isa, isa);
    } else {
      EXPECT_EQ(k, nullptr) << IsaName(isa);
    }
  }
  ASSERT_NE(GetKernels(Isa::kScalar), nullptr);  // always available
}

TEST(Dispatch, EnvironmentCapsTheIsa) {
  const Isa hw = HardwareIsa();
  {
    ScopedIsaEnv env(nullptr);
    EXPECT_EQ(DetectIsa(), hw);
  }
  {
    ScopedIsaEnv env("scalar");
    EXPECT_EQ(DetectIsa(), Isa::kScalar);
  }
  {
    ScopedIsaEnv env("avx2");
    EXPECT_EQ(DetectIsa(), hw < Isa::kAvx2 ? hw : Isa::kAvx2);
  }
  {
    ScopedIsaEnv env("avx512");  // a cap, never an upgrade
    EXPECT_EQ(DetectIsa(), hw);
  }
  {
    ScopedIsaEnv env("sse9");  // unknown: ignored (with a warning)
    EXPECT_EQ(DetectIsa(), hw);
  }
}

TEST(Dispatch, BestKernelsAndErasedLookup) {
  const DistanceKernels& best = BestKernels();
  EXPECT_LE(best.isa, HardwareIsa());
  EXPECT_EQ(&best, &BestKernels());  // resolved once
  EXPECT_EQ(GetDistanceFn(Metric::kCosine, ElementType::kInt8),
            best.distance[static_cast<int>(Metric::kCosine)][static_cast<int>(ElementType::kInt8)]);
  EXPECT_EQ(GetDistanceFn(static_cast<Metric>(3), ElementType::kFloat32), nullptr);
  EXPECT_EQ(GetDistanceFn(Metric::kL2, static_cast<ElementType>(9)), nullptr);
}

}  // namespace
}  // namespace strata::kernels
