#include "io/fault_injection.h"

#include <atomic>

namespace strata::io {
namespace {

constexpr int kPoints = 3;
// Remaining successes per point; -1 = disarmed.
std::atomic<std::int64_t> remaining[kPoints] = {-1, -1, -1};
std::atomic<std::uint64_t> injected{0};

}  // namespace

void ArmFault(FaultPoint point, std::uint64_t after) {
  remaining[static_cast<int>(point)].store(static_cast<std::int64_t>(after));
}

void ClearFaults() {
  for (auto& r : remaining) r.store(-1);
  injected.store(0);
}

bool ShouldInjectFault(FaultPoint point) {
  auto& r = remaining[static_cast<int>(point)];
  std::int64_t left = r.load(std::memory_order_relaxed);
  while (left >= 0) {
    if (left == 0) {
      injected.fetch_add(1);
      return true;
    }
    if (r.compare_exchange_weak(left, left - 1)) return false;
  }
  return false;
}

std::uint64_t InjectedFaults() { return injected.load(); }

}  // namespace strata::io
