#include "strata/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace strata {

bool ProgressBar::Enabled() {
  static const bool enabled = isatty(STDERR_FILENO) && std::getenv("STRATA_NO_PROGRESS") == nullptr;
  return enabled;
}

ProgressBar::ProgressBar(std::string phase, std::uint64_t total, double delay_seconds)
    : phase_(std::move(phase)),
      total_(total),
      delay_seconds_(delay_seconds),
      start_(std::chrono::steady_clock::now()),
      enabled_(Enabled()) {}

ProgressBar::~ProgressBar() { Finish(); }

void ProgressBar::Add(std::uint64_t done) {
  done_.fetch_add(done, std::memory_order_relaxed);
  if (!enabled_) return;
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now() - start_)
                          .count();
  // Redraw at most 10 times a second, and only after the delay.
  std::int64_t last = last_draw_ns_.load(std::memory_order_relaxed);
  if (now_ns < static_cast<std::int64_t>(delay_seconds_ * 1e9) || now_ns - last < 100'000'000) {
    return;
  }
  if (!last_draw_ns_.compare_exchange_strong(last, now_ns)) return;
  Draw(false);
}

void ProgressBar::Draw(bool force) {
  std::lock_guard<std::mutex> lock(draw_mu_);
  if (finished_ && !force) return;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::uint64_t done = done_.load(std::memory_order_relaxed);
  const double frac = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 0.0;
  const int width = 30;
  const int filled = static_cast<int>(frac * width + 0.5);
  std::string bar(static_cast<std::size_t>(filled > width ? width : filled), '#');
  bar.resize(width, '.');
  const double eta = frac > 0 ? elapsed * (1.0 - frac) / frac : 0.0;
  std::fprintf(stderr, "\r%s [%s] %5.1f%%  %.0fs elapsed, ETA %.0fs   ", phase_.c_str(),
               bar.c_str(), frac * 100.0, elapsed, eta);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::Finish() {
  std::lock_guard<std::mutex> lock(draw_mu_);
  if (finished_) return;
  finished_ = true;
  if (drawn_) {
    std::fprintf(stderr, "\r%*s\r", 100, "");
    std::fflush(stderr);
  }
}

}  // namespace strata
