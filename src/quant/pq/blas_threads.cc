#include "quant/pq/blas_threads.h"

#include <cblas.h>

#include <mutex>

namespace strata::quant {
namespace {

std::mutex g_mu;
int g_depth = 0;        // live guards
int g_saved_threads = 1;  // OpenBLAS thread count before the first guard

}  // namespace

ScopedSingleThreadedBlas::ScopedSingleThreadedBlas() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_depth++ == 0) {
    g_saved_threads = openblas_get_num_threads();
    openblas_set_num_threads(1);
  }
}

ScopedSingleThreadedBlas::~ScopedSingleThreadedBlas() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (--g_depth == 0) openblas_set_num_threads(g_saved_threads);
}

}  // namespace strata::quant
