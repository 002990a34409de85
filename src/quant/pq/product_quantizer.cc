#include "quant/pq/product_quantizer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "base/parallel.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/nearest.h"
#include "quant/pq/rng.h"
#include "quant/pq/sample.h"

namespace strata::quant {
namespace {

constexpr std::uint64_t kPqSampleStream = 11;
constexpr std::uint64_t kPqSubspaceStreamBase = 100;

}  // namespace

Status PqOptions::Validate() const {
  if (m == 0) return Status::InvalidArgument("PqOptions.m (subspaces) must be >= 1");
  if (iterations < 0) return Status::InvalidArgument("PqOptions.iterations must be >= 0");
  if (init != KMeansInit::kRandomRows && init != KMeansInit::kKMeansPlusPlus) {
    return Status::InvalidArgument("PqOptions.init is not a known KMeansInit");
  }
  return Status::OK();
}

std::vector<std::uint32_t> SubspaceOffsets(std::size_t d, std::size_t m) {
  std::vector<std::uint32_t> offsets(m + 1, 0);
  const std::size_t base = d / m, extra = d % m;
  for (std::size_t j = 0; j < m; ++j) {
    offsets[j + 1] = offsets[j] + static_cast<std::uint32_t>(base + (j < extra ? 1 : 0));
  }
  return offsets;
}

void ProductQuantizer::BuildTransposed() {
  centroids_t_.resize(centroids_.size());
  for (std::size_t j = 0; j < m_; ++j) {
    const std::size_t dsub = subspace_dim(j);
    const float* src = centroids_.data() + kCentroids * offsets_[j];
    float* dst = centroids_t_.data() + kCentroids * offsets_[j];
    for (std::size_t c = 0; c < kCentroids; ++c) {
      for (std::size_t i = 0; i < dsub; ++i) dst[i * kCentroids + c] = src[c * dsub + i];
    }
  }
}

Result<ProductQuantizer> ProductQuantizer::FromParts(std::size_t d,
                                                     std::vector<std::uint32_t> offsets,
                                                     std::vector<float> mean,
                                                     std::vector<float> centroids) {
  if (d == 0 || offsets.size() < 2 || offsets.size() - 1 > d) {
    return Status::InvalidArgument("ProductQuantizer: need 1 <= m <= d subspaces");
  }
  if (offsets.front() != 0 || offsets.back() != d) {
    return Status::InvalidArgument("ProductQuantizer: subspace offsets must span [0, d]");
  }
  for (std::size_t j = 0; j + 1 < offsets.size(); ++j) {
    if (offsets[j + 1] <= offsets[j]) {
      return Status::InvalidArgument("ProductQuantizer: subspace offsets must increase");
    }
  }
  if (!mean.empty() && mean.size() != d) {
    return Status::InvalidArgument("ProductQuantizer: mean must have d values or none");
  }
  if (centroids.size() != kCentroids * d) {
    return Status::InvalidArgument("ProductQuantizer: codebook must hold 256 * d floats");
  }
  for (const float v : mean) {
    if (!std::isfinite(v)) return Status::InvalidArgument("ProductQuantizer: non-finite mean");
  }
  for (const float v : centroids) {
    if (!std::isfinite(v)) return Status::InvalidArgument("ProductQuantizer: non-finite centroid");
  }
  ProductQuantizer pq;
  pq.d_ = d;
  pq.m_ = offsets.size() - 1;
  pq.offsets_ = std::move(offsets);
  pq.mean_ = std::move(mean);
  pq.centroids_ = std::move(centroids);
  pq.BuildTransposed();
  return pq;
}

Result<ProductQuantizer> ProductQuantizer::Train(const float* data, std::size_t n,
                                                 std::size_t d, const PqOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (d == 0) return Status::InvalidArgument("PQ: dimension must be >= 1");
  if (options.m > d) {
    return Status::InvalidArgument("PQ: m = " + std::to_string(options.m) +
                                   " subspaces exceed d = " + std::to_string(d));
  }
  if (data == nullptr) return Status::InvalidArgument("PQ: null training data");
  const std::size_t rows =
      SampleRowCount(n, d, options.max_sample_bytes, options.max_train_rows);
  if (rows < kCentroids) {
    return Status::InvalidArgument("PQ: training needs >= 256 sample rows, have " +
                                   std::to_string(rows) + " (use a flat scan for small sets)");
  }
  std::vector<float> sample;
  GatherRows(data, d, SampleRows(n, rows, MixSeed(options.seed, kPqSampleStream)), &sample);
  for (std::size_t i = 0; i < sample.size(); ++i) {
    if (!std::isfinite(sample[i])) {
      return Status::InvalidArgument("PQ: non-finite value in training data");
    }
  }
  std::vector<float> mean;
  if (options.center) {
    std::vector<double> acc(d, 0.0);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < d; ++i) acc[i] += sample[r * d + i];
    }
    mean.resize(d);
    for (std::size_t i = 0; i < d; ++i) mean[i] = static_cast<float>(acc[i] / rows);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < d; ++i) sample[r * d + i] -= mean[i];
    }
  }

  const std::size_t m = options.m;
  const std::vector<std::uint32_t> offsets = SubspaceOffsets(d, m);
  std::vector<float> centroids(kCentroids * d);
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;
  // Enough subspaces to keep every thread busy: one single-threaded k-means
  // per subspace in parallel (no per-iteration synchronisation). Otherwise
  // subspaces one after another, each k-means using all threads.
  const bool across = m >= threads;
  std::vector<Status> status(m);
  ScopedSingleThreadedBlas blas_guard;
  auto train_one = [&](std::size_t j, unsigned sub_threads) {
    const std::size_t off = offsets[j], dsub = offsets[j + 1] - offsets[j];
    std::vector<float> slice(rows * dsub);
    for (std::size_t r = 0; r < rows; ++r) {
      std::memcpy(slice.data() + r * dsub, sample.data() + r * d + off, dsub * sizeof(float));
    }
    KMeansOptions km;
    km.k = kCentroids;
    km.iterations = options.iterations;
    km.init = options.init;
    km.seed = MixSeed(options.seed, kPqSubspaceStreamBase + j);
    km.threads = sub_threads;
    Result<KMeansResult> res = TrainKMeansOnRows(slice.data(), rows, dsub, km);
    if (!res.ok()) {
      status[j] = res.status().WithContext("PQ subspace " + std::to_string(j));
      return;
    }
    std::memcpy(centroids.data() + kCentroids * off, res->centroids.data(),
                kCentroids * dsub * sizeof(float));
  };
  if (across) {
    ParallelFor(m, threads, [&](std::size_t j, unsigned) { train_one(j, 1); }, 1);
  } else {
    for (std::size_t j = 0; j < m; ++j) train_one(j, threads);
  }
  for (const Status& s : status) STRATA_RETURN_IF_ERROR(s);
  return FromParts(d, offsets, std::move(mean), std::move(centroids));
}

Status ProductQuantizer::Encode(const float* x, std::size_t n, std::uint8_t* codes,
                                unsigned threads) const {
  if (m_ == 0) return Status::InvalidArgument("PQ Encode: quantizer is not trained");
  if (n == 0) return Status::OK();
  if (x == nullptr || codes == nullptr) return Status::InvalidArgument("PQ Encode: null pointer");
  if (threads == 0) threads = DefaultThreads();
  std::vector<CentroidSearcher> searchers;
  searchers.reserve(m_);
  for (std::size_t j = 0; j < m_; ++j) searchers.emplace_back(centroid(j, 0), kCentroids, subspace_dim(j));
  struct Work {
    CentroidSearcher::Scratch scratch;
    std::vector<float> rows;
    std::vector<std::uint32_t> labels;
  };
  std::vector<Work> work(threads);
  ScopedSingleThreadedBlas blas_guard;
  ParallelForChunks(n, threads, CentroidSearcher::kRowBlock,
                    [&](std::size_t b, std::size_t e, unsigned t) {
                      Work& w = work[t];
                      const std::size_t nr = e - b;
                      const float* src = x + b * d_;
                      if (!mean_.empty()) {
                        w.rows.resize(nr * d_);
                        for (std::size_t r = 0; r < nr; ++r) {
                          for (std::size_t i = 0; i < d_; ++i) {
                            w.rows[r * d_ + i] = src[r * d_ + i] - mean_[i];
                          }
                        }
                        src = w.rows.data();
                      }
                      w.labels.resize(nr);
                      for (std::size_t j = 0; j < m_; ++j) {
                        searchers[j].Nearest(src + offsets_[j], d_, nr, w.labels.data(), nullptr,
                                             &w.scratch);
                        for (std::size_t r = 0; r < nr; ++r) {
                          codes[(b + r) * m_ + j] = static_cast<std::uint8_t>(w.labels[r]);
                        }
                      }
                    });
  return Status::OK();
}

Status ProductQuantizer::Decode(const std::uint8_t* codes, std::size_t n, float* out) const {
  if (m_ == 0) return Status::InvalidArgument("PQ Decode: quantizer is not trained");
  if (n == 0) return Status::OK();
  if (codes == nullptr || out == nullptr) return Status::InvalidArgument("PQ Decode: null pointer");
  for (std::size_t r = 0; r < n; ++r) {
    float* o = out + r * d_;
    for (std::size_t j = 0; j < m_; ++j) {
      std::memcpy(o + offsets_[j], centroid(j, codes[r * m_ + j]), subspace_dim(j) * sizeof(float));
    }
    if (!mean_.empty()) {
      for (std::size_t i = 0; i < d_; ++i) o[i] += mean_[i];
    }
  }
  return Status::OK();
}

Status ProductQuantizer::ComputeDistanceTable(const float* query, Metric metric,
                                              PqDistanceTable* table) const {
  if (m_ == 0) return Status::InvalidArgument("PQ distance table: quantizer is not trained");
  if (query == nullptr || table == nullptr) {
    return Status::InvalidArgument("PQ distance table: null pointer");
  }
  const PqKernels& kern = BestPqKernels();
  table->metric = metric;
  table->m = m_;
  table->values.resize(m_ * kCentroids);
  float* out = table->values.data();
  switch (metric) {
    case Metric::kL2: {
      // ||q - (mean + c)||^2 = ||(q - mean) - c||^2 per subspace.
      const float* q = query;
      std::vector<float> centred;
      if (!mean_.empty()) {
        centred.resize(d_);
        for (std::size_t i = 0; i < d_; ++i) centred[i] = query[i] - mean_[i];
        q = centred.data();
      }
      for (std::size_t j = 0; j < m_; ++j) {
        kern.l2_table(q + offsets_[j], centroids_t_.data() + kCentroids * offsets_[j],
                      subspace_dim(j), out + j * kCentroids);
      }
      table->bias = 0.0f;
      return Status::OK();
    }
    case Metric::kInnerProduct:
    case Metric::kCosine: {
      // -<q, mean + c> = -<q, mean> - sum_j <q_j, c_j>: the mean's share is
      // one constant per query, carried in the bias.
      for (std::size_t j = 0; j < m_; ++j) {
        kern.ip_table(query + offsets_[j], centroids_t_.data() + kCentroids * offsets_[j],
                      subspace_dim(j), out + j * kCentroids);
      }
      double bias = metric == Metric::kCosine ? 1.0 : 0.0;
      for (std::size_t i = 0; i < mean_.size(); ++i) {
        bias -= static_cast<double>(query[i]) * mean_[i];
      }
      table->bias = static_cast<float>(bias);
      return Status::OK();
    }
  }
  return Status::InvalidArgument("PQ distance table: unknown metric");
}

}  // namespace strata::quant
