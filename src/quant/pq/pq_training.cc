#include "quant/pq/pq_training.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "base/parallel.h"
#include "base/random.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/kmeans.h"
#include "quant/pq/nearest.h"

namespace strata::quant::internal {
namespace {

constexpr std::uint64_t kPqSubspaceStreamBase = 100;
constexpr std::size_t kK = ProductQuantizer::kCentroids;

}  // namespace

Status TrainSubspaceCodebooks(const float* x, std::size_t n, std::size_t d,
                              const std::vector<std::uint32_t>& offsets, const PqOptions& options,
                              int iterations, bool warm_start, std::vector<float>* centroids) {
  const std::size_t m = offsets.size() - 1;
  if (!warm_start) centroids->assign(kK * d, 0.0f);
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;
  // Enough subspaces to keep every thread busy: one single-threaded k-means
  // per subspace in parallel (no per-iteration synchronisation). Otherwise
  // subspaces one after another, each k-means using all threads.
  const bool across = m >= threads;
  std::vector<Status> status(m);
  ScopedSingleThreadedBlas blas_guard;
  auto train_one = [&](std::size_t j, unsigned sub_threads) {
    const std::size_t off = offsets[j], dsub = offsets[j + 1] - offsets[j];
    std::vector<float> slice(n * dsub);
    for (std::size_t r = 0; r < n; ++r) {
      std::memcpy(slice.data() + r * dsub, x + r * d + off, dsub * sizeof(float));
    }
    KMeansOptions km;
    km.k = kK;
    km.iterations = iterations;
    km.init = options.init;
    km.seed = MixSeed(options.seed, kPqSubspaceStreamBase + j);
    km.threads = sub_threads;
    float* cb = centroids->data() + kK * off;
    Result<KMeansResult> res = warm_start ? TrainKMeansFrom(slice.data(), n, dsub, cb, km)
                                          : TrainKMeansOnRows(slice.data(), n, dsub, km);
    if (!res.ok()) {
      status[j] = res.status().WithContext("PQ subspace " + std::to_string(j));
      return;
    }
    std::memcpy(cb, res->centroids.data(), kK * dsub * sizeof(float));
  };
  if (across) {
    ParallelFor(
        m, threads, [&](std::size_t j, unsigned) { train_one(j, 1); }, 1);
  } else {
    for (std::size_t j = 0; j < m; ++j) train_one(j, threads);
  }
  for (const Status& s : status) STRATA_RETURN_IF_ERROR(s);
  return Status::OK();
}

void EncodeRows(const float* x, std::size_t n, std::size_t d,
                const std::vector<std::uint32_t>& offsets, const std::vector<float>& centroids,
                unsigned threads, std::uint8_t* codes) {
  const std::size_t m = offsets.size() - 1;
  std::vector<CentroidSearcher> searchers;
  searchers.reserve(m);
  for (std::size_t j = 0; j < m; ++j) {
    searchers.emplace_back(centroids.data() + kK * offsets[j], kK, offsets[j + 1] - offsets[j]);
  }
  struct Work {
    CentroidSearcher::Scratch scratch;
    std::vector<std::uint32_t> labels;
  };
  std::vector<Work> work(threads);
  ScopedSingleThreadedBlas blas_guard;
  ParallelForChunks(n, threads, CentroidSearcher::kRowBlock,
                    [&](std::size_t b, std::size_t e, unsigned t) {
                      Work& w = work[t];
                      w.labels.resize(e - b);
                      for (std::size_t j = 0; j < m; ++j) {
                        searchers[j].Nearest(x + b * d + offsets[j], d, e - b, w.labels.data(),
                                             nullptr, &w.scratch);
                        for (std::size_t r = b; r < e; ++r) {
                          codes[r * m + j] = static_cast<std::uint8_t>(w.labels[r - b]);
                        }
                      }
                    });
}

void EncodeFewRows(const float* x, std::size_t n, std::size_t d,
                   const std::vector<std::uint32_t>& offsets, const std::vector<float>& centroids,
                   std::uint8_t* codes) {
  const std::size_t m = offsets.size() - 1;
  for (std::size_t r = 0; r < n; ++r) {
    const float* row = x + r * d;
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t ds = offsets[j + 1] - offsets[j];
      const float* sub = row + offsets[j];
      const float* c = centroids.data() + kK * offsets[j];
      float best = std::numeric_limits<float>::infinity();
      std::uint32_t label = 0;
      for (std::uint32_t k = 0; k < kK; ++k, c += ds) {
        const float dist = SquaredL2Short(sub, c, ds);
        if (dist < best) {
          best = dist;
          label = k;
        }
      }
      codes[r * m + j] = static_cast<std::uint8_t>(label);
    }
  }
}

void Rotate(const float* x, std::size_t n, std::size_t d, const float* rotation, float* y) {
  if (n == 1) {
    // One query (y = R^T x): a plain loop. OpenBLAS may hand even one small
    // sgemv to its thread pool, whose threads then spin in sched_yield between
    // queries and steal the search threads' cores.
    std::fill(y, y + d, 0.0f);
    for (std::size_t i = 0; i < d; ++i) {
      const float xi = x[i];
      const float* row = rotation + i * d;
      for (std::size_t j = 0; j < d; ++j) y[j] += xi * row[j];
    }
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(n), static_cast<int>(d),
              static_cast<int>(d), 1.0f, x, static_cast<int>(d), rotation, static_cast<int>(d),
              0.0f, y, static_cast<int>(d));
}

}  // namespace strata::quant::internal
