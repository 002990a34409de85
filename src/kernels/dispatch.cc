// Run-time ISA selection: CPUID feature bits plus the XCR0 check that the OS
// saves the AVX / AVX-512 register state (a CPU can report AVX-512 while the
// kernel or hypervisor has it disabled; executing it then faults).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "kernels/distance.h"
#include "kernels/distance_isa.h"

#if defined(STRATA_KERNELS_HAVE_X86)
#include <cpuid.h>
#endif

namespace strata::kernels {
namespace {

#if defined(STRATA_KERNELS_HAVE_X86)
// xgetbv through inline asm: the _xgetbv intrinsic needs -mxsave, and this
// file is compiled for the baseline ISA.
std::uint64_t ReadXcr0() {
  std::uint32_t eax = 0, edx = 0;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<std::uint64_t>(edx) << 32) | eax;
}

bool Bit(unsigned reg, int bit) { return ((reg >> bit) & 1u) != 0; }

// Requires every feature the ISA's compile flags (cmake/StrataSimd.cmake)
// allow the compiler to emit, not just the ones the kernels use on purpose.
Isa DetectHardware() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0 || eax < 7) return Isa::kScalar;
  unsigned ecx1 = 0;
  __get_cpuid(1, &eax, &ebx, &ecx1, &edx);
  const bool osxsave = Bit(ecx1, 27);
  if (!osxsave) return Isa::kScalar;
  const std::uint64_t xcr0 = ReadXcr0();
  const bool os_avx = (xcr0 & 0x6) == 0x6;       // XMM and YMM state
  const bool os_avx512 = (xcr0 & 0xE6) == 0xE6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  unsigned max_subleaf7 = 0, ebx7 = 0, ecx7 = 0, edx7 = 0;
  __get_cpuid_count(7, 0, &max_subleaf7, &ebx7, &ecx7, &edx7);
  unsigned eax7_1 = 0, ebx7_1 = 0, ecx7_1 = 0, edx7_1 = 0;
  if (max_subleaf7 >= 1) __get_cpuid_count(7, 1, &eax7_1, &ebx7_1, &ecx7_1, &edx7_1);

  const bool avx2 = os_avx && Bit(ecx1, 28) /*AVX*/ && Bit(ecx1, 12) /*FMA*/ &&
                    Bit(ecx1, 29) /*F16C*/ && Bit(ecx1, 23) /*POPCNT*/ && Bit(ebx7, 5) /*AVX2*/ &&
                    Bit(ebx7, 8) /*BMI2*/;
  if (!avx2) return Isa::kScalar;
  const bool avx512 = os_avx512 && Bit(ebx7, 16) /*F*/ && Bit(ebx7, 17) /*DQ*/ &&
                      Bit(ebx7, 30) /*BW*/ && Bit(ebx7, 31) /*VL*/ && Bit(ecx7, 11) /*VNNI*/ &&
                      Bit(ecx7, 14) /*VPOPCNTDQ*/ && Bit(eax7_1, 5) /*BF16*/;
  return avx512 ? Isa::kAvx512 : Isa::kAvx2;
}
#else
Isa DetectHardware() { return Isa::kScalar; }
#endif

bool ParseIsa(std::string_view s, Isa* out) {
  for (int i = 0; i < kNumIsas; ++i) {
    const Isa isa = static_cast<Isa>(i);
    if (s == IsaName(isa)) {
      *out = isa;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

Isa HardwareIsa() {
  static const Isa hw = DetectHardware();
  return hw;
}

Isa DetectIsa() {
  const Isa hw = HardwareIsa();
  const char* env = std::getenv("STRATA_ISA");  // NOLINT(concurrency-mt-unsafe): read-only use
  if (env == nullptr || *env == '\0') return hw;
  Isa cap = hw;
  if (!ParseIsa(env, &cap)) {
    // A typo must not silently change what is being measured, but this is a
    // query with no error channel, so it warns once and keeps the hardware ISA.
    static bool warned = [env] {
      std::fprintf(stderr, "strata: ignoring STRATA_ISA='%s' (expected scalar, avx2 or avx512)\n",
                   env);
      return true;
    }();
    (void)warned;
    return hw;
  }
  return cap < hw ? cap : hw;
}

const DistanceKernels* GetKernels(Isa isa) {
  if (isa > HardwareIsa()) return nullptr;
  switch (isa) {
    case Isa::kScalar:
      return ScalarKernelTable();
#if defined(STRATA_KERNELS_HAVE_X86)
    case Isa::kAvx2:
      return Avx2KernelTable();
    case Isa::kAvx512:
      return Avx512KernelTable();
#else
    default:
      return nullptr;
#endif
  }
  return nullptr;
}

const DistanceKernels& BestKernels() {
  static const DistanceKernels* const best = [] {
    const DistanceKernels* k = GetKernels(DetectIsa());
    return k != nullptr ? k : ScalarKernelTable();
  }();
  return *best;
}

ErasedDistanceFn GetDistanceFn(Metric metric, ElementType type) {
  const auto m = static_cast<std::size_t>(metric);
  const auto t = static_cast<std::size_t>(type);
  if (m >= kNumMetrics || t >= kNumElementTypes) return nullptr;
  return BestKernels().distance[m][t];
}

}  // namespace strata::kernels
