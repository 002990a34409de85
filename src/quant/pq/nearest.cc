#include "quant/pq/nearest.h"

#include <cblas.h>

#include <algorithm>
#include <limits>
#include <string>

#include "base/parallel.h"
#include "kernels/distance.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/pq_kernels.h"

namespace strata::quant {

float SquaredL2(const float* a, const float* b, std::size_t d) {
  // Short vectors (PQ subspaces of a few dims) are dominated by the indirect
  // call; an inline loop is several times faster there.
  if (d < 16) return SquaredL2Short(a, b, d);
  static const auto l2 = kernels::BestKernels().l2_f32;
  return l2(a, b, d);
}

CentroidSearcher::CentroidSearcher(const float* centroids, std::size_t k, std::size_t d)
    : centroids_(centroids), k_(k), d_(d), norms_(k) {
  for (std::size_t j = 0; j < k; ++j) {
    const float* c = centroids + j * d;
    // Double accumulation: the norms enter every distance, keep them tight.
    double s = 0;
    for (std::size_t i = 0; i < d; ++i) s += static_cast<double>(c[i]) * c[i];
    norms_[j] = static_cast<float>(s);
  }
}

void CentroidSearcher::NearestTile(const float* x, std::size_t ldx, std::size_t rows,
                                   std::uint32_t* labels, Scratch* s) const {
  const PqKernels& kern = BestPqKernels();
  const std::size_t kb_max = std::min(k_, kCentroidBlock);
  s->tile.resize(rows * kb_max);
  s->best.assign(rows, std::numeric_limits<float>::infinity());
  std::fill(labels, labels + rows, 0u);
  for (std::size_t cb = 0; cb < k_; cb += kCentroidBlock) {
    const std::size_t kb = std::min(kCentroidBlock, k_ - cb);
    // tile = -2 X C^T: row r, column j holds -2 <x_r, c_{cb+j}>.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                static_cast<int>(kb), static_cast<int>(d_), -2.0f, x, static_cast<int>(ldx),
                centroids_ + cb * d_, static_cast<int>(d_), 0.0f, s->tile.data(),
                static_cast<int>(kb));
    kern.argmin_update(s->tile.data(), kb, rows, kb, norms_.data() + cb,
                       static_cast<std::uint32_t>(cb), s->best.data(), labels);
  }
}

void CentroidSearcher::Nearest(const float* x, std::size_t ldx, std::size_t rows,
                               std::uint32_t* labels, float* distances, Scratch* s) const {
  for (std::size_t r0 = 0; r0 < rows; r0 += kRowBlock) {
    const std::size_t nr = std::min(kRowBlock, rows - r0);
    NearestTile(x + r0 * ldx, ldx, nr, labels + r0, s);
  }
  if (distances != nullptr) {
    for (std::size_t r = 0; r < rows; ++r) {
      distances[r] = SquaredL2(x + r * ldx, centroids_ + std::size_t{labels[r]} * d_, d_);
    }
  }
}

void CentroidSearcher::TopKTile(const float* x, std::size_t ldx, std::size_t rows,
                                std::size_t t, std::uint32_t* labels, float* distances,
                                Scratch* s) const {
  const std::size_t kb_max = std::min(k_, kCentroidBlock);
  s->tile.resize(rows * kb_max);
  s->top_dist.assign(rows * t, std::numeric_limits<float>::infinity());
  s->top_label.assign(rows * t, 0u);
  for (std::size_t cb = 0; cb < k_; cb += kCentroidBlock) {
    const std::size_t kb = std::min(kCentroidBlock, k_ - cb);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                static_cast<int>(kb), static_cast<int>(d_), -2.0f, x, static_cast<int>(ldx),
                centroids_ + cb * d_, static_cast<int>(d_), 0.0f, s->tile.data(),
                static_cast<int>(kb));
    for (std::size_t r = 0; r < rows; ++r) {
      const float* tr = s->tile.data() + r * kb;
      float* td = s->top_dist.data() + r * t;
      std::uint32_t* tl = s->top_label.data() + r * t;
      for (std::size_t j = 0; j < kb; ++j) {
        const float v = tr[j] + norms_[cb + j];
        if (!(v < td[t - 1])) continue;
        // Sorted insertion into a short list (t is small: candidates lists).
        std::size_t p = t - 1;
        while (p > 0 && v < td[p - 1]) {
          td[p] = td[p - 1];
          tl[p] = tl[p - 1];
          --p;
        }
        td[p] = v;
        tl[p] = static_cast<std::uint32_t>(cb + j);
      }
    }
  }
  // Exact distances, re-sorted (the expansion may have swapped near-ties).
  std::vector<std::pair<float, std::uint32_t>> row(t);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t i = 0; i < t; ++i) {
      const std::uint32_t l = s->top_label[r * t + i];
      row[i] = {SquaredL2(x + r * ldx, centroids_ + std::size_t{l} * d_, d_), l};
    }
    std::sort(row.begin(), row.end());
    for (std::size_t i = 0; i < t; ++i) {
      distances[r * t + i] = row[i].first;
      labels[r * t + i] = row[i].second;
    }
  }
}

void CentroidSearcher::TopK(const float* x, std::size_t ldx, std::size_t rows, std::size_t t,
                            std::uint32_t* labels, float* distances, Scratch* s) const {
  for (std::size_t r0 = 0; r0 < rows; r0 += kRowBlock) {
    const std::size_t nr = std::min(kRowBlock, rows - r0);
    TopKTile(x + r0 * ldx, ldx, nr, t, labels + r0 * t, distances + r0 * t, s);
  }
}

namespace {

Status CheckAssignArgs(const float* x, std::size_t n, std::size_t d, const float* centroids,
                       std::size_t k, const void* labels) {
  if (d == 0) return Status::InvalidArgument("nearest-centroid search: dimension must be >= 1");
  if (k == 0 || k >= std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("nearest-centroid search: k must be in [1, 2^32 - 1), got " +
                                   std::to_string(k));
  }
  if (centroids == nullptr) return Status::InvalidArgument("nearest-centroid search: null centroids");
  if (n > 0 && (x == nullptr || labels == nullptr)) {
    return Status::InvalidArgument("nearest-centroid search: null input or output");
  }
  return Status::OK();
}

}  // namespace

Status AssignNearest(const float* x, std::size_t n, std::size_t d, const float* centroids,
                     std::size_t k, std::uint32_t* labels, float* distances, unsigned threads) {
  STRATA_RETURN_IF_ERROR(CheckAssignArgs(x, n, d, centroids, k, labels));
  if (n == 0) return Status::OK();
  if (threads == 0) threads = DefaultThreads();
  const CentroidSearcher searcher(centroids, k, d);
  ScopedSingleThreadedBlas blas_guard;
  std::vector<CentroidSearcher::Scratch> scratch(threads);
  // Chunks are whole tiles, so every row sees the same sgemm shapes whatever
  // the thread count: results are identical for any `threads`.
  ParallelForChunks(n, threads, CentroidSearcher::kRowBlock,
                    [&](std::size_t b, std::size_t e, unsigned t) {
                      searcher.Nearest(x + b * d, d, e - b, labels + b,
                                       distances ? distances + b : nullptr, &scratch[t]);
                    });
  return Status::OK();
}

Status AssignTopK(const float* x, std::size_t n, std::size_t d, const float* centroids,
                  std::size_t k, std::size_t t, std::uint32_t* labels, float* distances,
                  unsigned threads) {
  STRATA_RETURN_IF_ERROR(CheckAssignArgs(x, n, d, centroids, k, labels));
  if (t == 0 || t > k) {
    return Status::InvalidArgument("AssignTopK: t must be in [1, k], got t=" + std::to_string(t) +
                                   " k=" + std::to_string(k));
  }
  if (n > 0 && distances == nullptr) return Status::InvalidArgument("AssignTopK: null distances");
  if (n == 0) return Status::OK();
  if (threads == 0) threads = DefaultThreads();
  const CentroidSearcher searcher(centroids, k, d);
  ScopedSingleThreadedBlas blas_guard;
  std::vector<CentroidSearcher::Scratch> scratch(threads);
  ParallelForChunks(n, threads, CentroidSearcher::kRowBlock,
                    [&](std::size_t b, std::size_t e, unsigned th) {
                      searcher.TopK(x + b * d, d, e - b, t, labels + b * t, distances + b * t,
                                    &scratch[th]);
                    });
  return Status::OK();
}

}  // namespace strata::quant
