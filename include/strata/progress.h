// Public so that tools and bindings can show the same bar.
// ProgressBar: a one-line terminal progress display with phase name, rate and ETA.
//
// Drawn on stderr only when stderr is a TTY (so logs and CI output stay clean)
// and only for work that lasts longer than a moment: nothing is drawn during
// the first `delay_seconds`. Update() may be called from any thread and is
// cheap (an atomic add plus a rate-limited redraw).
#ifndef STRATA_PROGRESS_H_
#define STRATA_PROGRESS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace strata {

class ProgressBar {
 public:
  // `phase` names the work ("gt", "build: pq"), `total` the units to do.
  ProgressBar(std::string phase, std::uint64_t total, double delay_seconds = 1.5);
  ~ProgressBar();  // calls Finish()
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  // Adds `done` units; thread-safe.
  void Add(std::uint64_t done);
  // Clears the line (if one was drawn). Idempotent.
  void Finish();

  // Whether bars are drawn at all in this process (stderr is a TTY and
  // STRATA_NO_PROGRESS is unset).
  static bool Enabled();

 private:
  void Draw(bool force);

  std::string phase_;
  std::uint64_t total_;
  double delay_seconds_;
  std::atomic<std::uint64_t> done_{0};
  std::chrono::steady_clock::time_point start_;
  std::atomic<std::int64_t> last_draw_ns_{0};
  std::mutex draw_mu_;
  bool drawn_ = false;
  bool finished_ = false;
  bool enabled_;
};

}  // namespace strata

#endif  // STRATA_PROGRESS_H_
