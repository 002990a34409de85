// Monotonic wall-clock timing helpers.
#ifndef STRATA_BASE_TIMER_H_
#define STRATA_BASE_TIMER_H_

#include <chrono>
#include <cstdint>

namespace strata {

inline std::int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Measures elapsed time since construction or the last Reset().
class Timer {
 public:
  Timer() : start_(NowNanos()) {}
  void Reset() { start_ = NowNanos(); }
  std::int64_t ElapsedNanos() const { return NowNanos() - start_; }
  double ElapsedMicros() const { return static_cast<double>(ElapsedNanos()) * 1e-3; }
  double ElapsedSeconds() const { return static_cast<double>(ElapsedNanos()) * 1e-9; }

 private:
  std::int64_t start_;
};

}  // namespace strata

#endif  // STRATA_BASE_TIMER_H_
