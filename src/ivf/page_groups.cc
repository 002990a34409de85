#include "ivf/page_groups.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "kernels/distance.h"

namespace strata::ivf {

namespace {

// Power iterations for the principal direction: the split only needs a
// direction of large spread, not the exact eigenvector.
constexpr int kPowerIterations = 6;

class Bisector {
 public:
  Bisector(const float* data, std::size_t d, std::size_t group)
      : data_(data), d_(d), group_(group), ip_(kernels::BestKernels().ip_f32),
        mean_(d), v_(d), w_(d) {}

  void Split(std::uint32_t* m, std::size_t n) {
    if (n <= group_) return;
    const std::size_t pages = (n + group_ - 1) / group_;
    const std::size_t left = (pages / 2) * group_;
    Direction(m, n);
    keyed_.resize(n);
    for (std::size_t i = 0; i < n; ++i) keyed_[i] = {ip_(Row(m[i]), v_.data(), d_), m[i]};
    std::nth_element(keyed_.begin(), keyed_.begin() + static_cast<std::ptrdiff_t>(left),
                     keyed_.end());
    for (std::size_t i = 0; i < n; ++i) m[i] = keyed_[i].second;
    Split(m, left);
    Split(m + left, n - left);
  }

 private:
  const float* Row(std::uint32_t id) const { return data_ + static_cast<std::size_t>(id) * d_; }

  // Principal direction of rows m[0, n) into v_.
  void Direction(const std::uint32_t* m, std::size_t n) {
    std::fill(mean_.begin(), mean_.end(), 0.0f);
    for (std::size_t i = 0; i < n; ++i) {
      const float* x = Row(m[i]);
      for (std::size_t j = 0; j < d_; ++j) mean_[j] += x[j];
    }
    for (float& x : mean_) x /= static_cast<float>(n);
    // Start from the first member's offset from the mean (deterministic: the
    // caller's order is); fall back to an axis if that offset is zero.
    const float* x0 = Row(m[0]);
    for (std::size_t j = 0; j < d_; ++j) v_[j] = x0[j] - mean_[j];
    if (!kernels::NormalizeInPlace(v_.data(), d_)) {
      std::fill(v_.begin(), v_.end(), 0.0f);
      v_[0] = 1.0f;
    }
    for (int it = 0; it < kPowerIterations; ++it) {
      std::fill(w_.begin(), w_.end(), 0.0f);
      const float mv = ip_(mean_.data(), v_.data(), d_);
      for (std::size_t i = 0; i < n; ++i) {
        const float* x = Row(m[i]);
        const float c = ip_(x, v_.data(), d_) - mv;
        for (std::size_t j = 0; j < d_; ++j) w_[j] += c * (x[j] - mean_[j]);
      }
      // All members equal along v: any direction does.
      if (!kernels::NormalizeInPlace(w_.data(), d_)) return;
      v_.swap(w_);
    }
  }

  const float* data_;
  const std::size_t d_;
  const std::size_t group_;
  float (*ip_)(const float*, const float*, std::size_t);
  std::vector<float> mean_, v_, w_;
  std::vector<std::pair<float, std::uint32_t>> keyed_;
};

}  // namespace

void OrderInPageGroups(const float* data, std::size_t d, std::span<std::uint32_t> members,
                       std::size_t group) {
  if (group == 0 || members.size() <= group) return;
  Bisector(data, d, group).Split(members.data(), members.size());
}

}  // namespace strata::ivf
