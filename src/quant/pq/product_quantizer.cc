#include "quant/pq/product_quantizer.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "base/parallel.h"
#include "base/random.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/nearest.h"
#include "quant/pq/pq_training.h"
#include "quant/pq/sample.h"

namespace strata::quant {
namespace {

constexpr std::uint64_t kPqSampleStream = 11;

}  // namespace

Status PqOptions::Validate() const {
  if (m == 0) return Status::InvalidArgument("PqOptions.m (subspaces) must be >= 1");
  if (iterations < 0) return Status::InvalidArgument("PqOptions.iterations must be >= 0");
  if (init != KMeansInit::kRandomRows && init != KMeansInit::kKMeansPlusPlus) {
    return Status::InvalidArgument("PqOptions.init is not a known KMeansInit");
  }
  if (opq_iterations < 0) return Status::InvalidArgument("PqOptions.opq_iterations must be >= 0");
  if (opq_pq_iterations < 1) {
    return Status::InvalidArgument("PqOptions.opq_pq_iterations must be >= 1");
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
                                                     std::vector<float> centroids,
                                                     std::vector<float> rotation) {
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
  if (!rotation.empty() && rotation.size() != d * d) {
    return Status::InvalidArgument("ProductQuantizer: rotation must be d x d or none");
  }
  for (const auto* v : {&mean, &centroids, &rotation}) {
    for (const float f : *v) {
      if (!std::isfinite(f)) return Status::InvalidArgument("ProductQuantizer: non-finite value");
    }
  }
  if (!rotation.empty()) {
    // R R^T = I: a corrupted or non-orthogonal matrix would silently change
    // every distance.
    std::vector<float> g(d * d);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(d), static_cast<int>(d),
                static_cast<int>(d), 1.0f, rotation.data(), static_cast<int>(d), rotation.data(),
                static_cast<int>(d), 0.0f, g.data(), static_cast<int>(d));
    for (std::size_t i = 0; i < d; ++i) {
      for (std::size_t j = 0; j < d; ++j) {
        if (std::fabs(g[i * d + j] - (i == j ? 1.0f : 0.0f)) > 1e-3f) {
          return Status::InvalidArgument("ProductQuantizer: rotation is not orthogonal");
        }
      }
    }
  }
  ProductQuantizer pq;
  pq.d_ = d;
  pq.m_ = offsets.size() - 1;
  pq.offsets_ = std::move(offsets);
  pq.mean_ = std::move(mean);
  pq.centroids_ = std::move(centroids);
  pq.rotation_ = std::move(rotation);
  pq.BuildTransposed();
  return pq;
}

Result<ProductQuantizer> ProductQuantizer::Train(const float* data, std::size_t n, std::size_t d,
                                                 const PqOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (d == 0) return Status::InvalidArgument("PQ: dimension must be >= 1");
  if (options.m > d) {
    return Status::InvalidArgument("PQ: m = " + std::to_string(options.m) +
                                   " subspaces exceed d = " + std::to_string(d));
  }
  if (data == nullptr) return Status::InvalidArgument("PQ: null training data");
  const std::size_t rows = SampleRowCount(n, d, options.max_sample_bytes, options.max_train_rows);
  if (rows < kCentroids) {
    return Status::InvalidArgument("PQ: training needs >= 256 sample rows, have " +
                                   std::to_string(rows) + " (use a flat scan for small sets)");
  }
  std::vector<float> sample;
  GatherRows(data, d, SampleRows(n, rows, MixSeed(options.seed, kPqSampleStream)), &sample);
  for (const float v : sample) {
    if (!std::isfinite(v)) return Status::InvalidArgument("PQ: non-finite value in training data");
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
  const std::vector<std::uint32_t> offsets = SubspaceOffsets(d, options.m);
  std::vector<float> centroids, rotation;
  if (options.opq_iterations > 0) {
    STRATA_RETURN_IF_ERROR(
        internal::TrainOpq(sample.data(), rows, d, offsets, options, &rotation, &centroids));
  } else {
    STRATA_RETURN_IF_ERROR(internal::TrainSubspaceCodebooks(
        sample.data(), rows, d, offsets, options, options.iterations, false, &centroids));
  }
  return FromParts(d, offsets, std::move(mean), std::move(centroids), std::move(rotation));
}

void ProductQuantizer::Preprocess(const float* x, std::size_t rows, float* out) const {
  const float* src = x;
  std::vector<float> centred;
  if (!mean_.empty()) {
    centred.resize(rows * d_);
    for (std::size_t r = 0; r < rows; ++r) {
      for (std::size_t i = 0; i < d_; ++i) centred[r * d_ + i] = x[r * d_ + i] - mean_[i];
    }
    src = centred.data();
  }
  if (!rotation_.empty()) {
    internal::Rotate(src, rows, d_, rotation_.data(), out);
  } else if (src != out) {
    std::memcpy(out, src, rows * d_ * sizeof(float));
  }
}

Status ProductQuantizer::Encode(const float* x, std::size_t n, std::uint8_t* codes,
                                unsigned threads) const {
  if (m_ == 0) return Status::InvalidArgument("PQ Encode: quantizer is not trained");
  if (n == 0) return Status::OK();
  if (x == nullptr || codes == nullptr) return Status::InvalidArgument("PQ Encode: null pointer");
  if (threads == 0) threads = DefaultThreads();
  if (n < internal::kFewRows) {
    if (mean_.empty() && rotation_.empty()) {
      internal::EncodeFewRows(x, n, d_, offsets_, centroids_, codes);
      return Status::OK();
    }
    std::vector<float> buf(n * d_);
    Preprocess(x, n, buf.data());
    internal::EncodeFewRows(buf.data(), n, d_, offsets_, centroids_, codes);
    return Status::OK();
  }
  if (mean_.empty() && rotation_.empty()) {
    internal::EncodeRows(x, n, d_, offsets_, centroids_, threads, codes);
    return Status::OK();
  }
  // Centre / rotate a slab at a time so the temporary stays small.
  constexpr std::size_t kSlab = 16384;
  std::vector<float> buf(std::min(n, kSlab) * d_);
  for (std::size_t b = 0; b < n; b += kSlab) {
    const std::size_t rows = std::min(kSlab, n - b);
    {
      ScopedSingleThreadedBlas blas_guard;
      ParallelForChunks(rows, threads, 1024, [&](std::size_t rb, std::size_t re, unsigned) {
        Preprocess(x + (b + rb) * d_, re - rb, buf.data() + rb * d_);
      });
    }
    internal::EncodeRows(buf.data(), rows, d_, offsets_, centroids_, threads, codes + b * m_);
  }
  return Status::OK();
}

Status ProductQuantizer::Decode(const std::uint8_t* codes, std::size_t n, float* out) const {
  if (m_ == 0) return Status::InvalidArgument("PQ Decode: quantizer is not trained");
  if (n == 0) return Status::OK();
  if (codes == nullptr || out == nullptr) return Status::InvalidArgument("PQ Decode: null pointer");
  // Rows are rotated back a block at a time, one sgemm each: a matrix
  // product amortises the rotation's loads over the block's rows, which
  // one sgemv per row does not. The block stays at or under OpenBLAS's
  // threshold for going multi-threaded (m n k <= 4 * 65536), so a decode
  // never hands work to its pool threads.
  const std::size_t block =
      rotation_.empty() ? n : std::max<std::size_t>(1, (std::size_t{4} << 16) / (d_ * d_));
  std::vector<float> y(rotation_.empty() ? 0 : std::min(n, block) * d_);
  for (std::size_t first = 0; first < n; first += block) {
    const std::size_t rows = std::min(block, n - first);
    for (std::size_t r = 0; r < rows; ++r) {
      float* dst = rotation_.empty() ? out + (first + r) * d_ : y.data() + r * d_;
      const std::uint8_t* code = codes + (first + r) * m_;
      for (std::size_t j = 0; j < m_; ++j) {
        std::memcpy(dst + offsets_[j], centroid(j, code[j]), subspace_dim(j) * sizeof(float));
      }
    }
    float* o = out + first * d_;
    if (!rotation_.empty()) {
      // o = y R^T: o_i = sum_j R[i][j] y_j, for every row of the block.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(rows),
                  static_cast<int>(d_), static_cast<int>(d_), 1.0f, y.data(), static_cast<int>(d_),
                  rotation_.data(), static_cast<int>(d_), 0.0f, o, static_cast<int>(d_));
    }
    if (!mean_.empty()) {
      for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t i = 0; i < d_; ++i) o[r * d_ + i] += mean_[i];
      }
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
  if (metric != Metric::kL2 && metric != Metric::kInnerProduct && metric != Metric::kCosine) {
    return Status::InvalidArgument("PQ distance table: unknown metric");
  }
  const PqKernels& kern = BestPqKernels();
  table->metric = metric;
  table->m = m_;
  table->values.resize(m_ * kCentroids);
  float* out = table->values.data();
  std::vector<float> q(d_);
  if (metric == Metric::kL2) {
    // ||q - (mean + y R^T)||^2 = ||(q - mean) R - y||^2 (R orthogonal).
    Preprocess(query, 1, q.data());
    for (std::size_t j = 0; j < m_; ++j) {
      kern.l2_table(q.data() + offsets_[j], centroids_t_.data() + kCentroids * offsets_[j],
                    subspace_dim(j), out + j * kCentroids);
    }
    table->bias = 0.0f;
    return Status::OK();
  }
  // -<q, mean + y R^T> = -<q, mean> - <q R, y>: the mean's share is one
  // constant per query, carried in the bias; the rest is per subspace.
  if (rotation_.empty()) {
    std::memcpy(q.data(), query, d_ * sizeof(float));
  } else {
    internal::Rotate(query, 1, d_, rotation_.data(), q.data());
  }
  for (std::size_t j = 0; j < m_; ++j) {
    kern.ip_table(q.data() + offsets_[j], centroids_t_.data() + kCentroids * offsets_[j],
                  subspace_dim(j), out + j * kCentroids);
  }
  double bias = metric == Metric::kCosine ? 1.0 : 0.0;
  for (std::size_t i = 0; i < mean_.size(); ++i) bias -= static_cast<double>(query[i]) * mean_[i];
  table->bias = static_cast<float>(bias);
  return Status::OK();
}

}  // namespace strata::quant
