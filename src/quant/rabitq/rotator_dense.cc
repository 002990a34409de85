// Dense Haar-random rotation: Q of the QR decomposition of a Gaussian matrix.
//
// Why QR with a sign fix: Q alone is orthogonal but not Haar-distributed
// (LAPACK's Householder convention biases the signs); multiplying column j by
// sign(R_jj) makes the distribution exactly uniform over O(D') (Mezzadri,
// "How to generate random matrices from the classical compact groups"), which
// is the assumption behind RaBitQ's unbiasedness and error bound. The QR runs
// in double so the stored float matrix is orthogonal to float precision.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "kernels/distance.h"
#include "quant/pq/blas_threads.h"
#include "quant/rabitq/le_coding.h"
#include "base/random.h"
#include "quant/rabitq/rotator.h"

extern "C" {
// LAPACK (provided by OpenBLAS), LP64 integer interface.
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
}

namespace strata::quant::rabitq {
namespace {

// Above this the matrix (D'^2 floats plus a double copy while building) is too
// large to be a sensible choice; the FHT rotator has no such limit.
constexpr std::size_t kMaxDenseDim = 4096;
// Up to this D' the QR runs with OpenBLAS single-threaded.
constexpr std::size_t kSingleThreadedQrDim = 512;

class DenseRotator final : public Rotator {
 public:
  DenseRotator(std::size_t dim, std::uint64_t seed, std::vector<float> matrix)
      : Rotator(RotatorKind::kDense, dim, seed),
        matrix_(std::move(matrix)),
        ip_(kernels::BestKernels().ip_f32) {}

  void Rotate(const float* in, float* out) const override {
    // One SIMD dot product per row (only the first dim() columns meet
    // non-zero input). Not sgemv: for one vector OpenBLAS's thread hand-off
    // costs more than the product (measured 29 us vs ~2 us at D' = 128).
    const std::size_t dp = padded_dim();
    for (std::size_t i = 0; i < dp; ++i) out[i] = ip_(matrix_.data() + i * dp, in, dim());
  }

  void RotateBatch(const float* in, std::size_t n, float* out) const override {
    if (n == 0) return;
    const int dp = static_cast<int>(padded_dim());
    const int d = static_cast<int>(dim());
    // out (n x D') = in (n x d) * P[:, :d]^T.
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), dp, d, 1.0f, in, d,
                matrix_.data(), dp, 0.0f, out, dp);
  }

  void InverseRotate(const float* in, float* out) const override {
    // out = (P^T in)[:d] = sum_i in_i P[i, :d], accumulated row by row
    // (contiguous, vectorisable; not a hot path).
    const std::size_t dp = padded_dim();
    const std::size_t d = dim();
    std::vector<double> acc(d, 0.0);
    for (std::size_t i = 0; i < dp; ++i) {
      const float* row = matrix_.data() + i * dp;
      const double x = in[i];
      for (std::size_t j = 0; j < d; ++j) acc[j] += x * row[j];
    }
    for (std::size_t j = 0; j < d; ++j) out[j] = static_cast<float>(acc[j]);
  }

 protected:
  std::size_t BodySize() const override { return matrix_.size() * sizeof(float); }
  void WriteBody(std::uint8_t* out) const override { std::memcpy(out, matrix_.data(), BodySize()); }

 private:
  std::vector<float> matrix_;                             // D' x D', row-major
  float (*ip_)(const float*, const float*, std::size_t);  // best float dot product
};

}  // namespace

Result<std::unique_ptr<Rotator>> CreateDenseRotator(std::size_t dim, std::uint64_t seed) {
  const std::size_t dp = PaddedDim(dim);
  if (dp > kMaxDenseDim) {
    return Status::InvalidArgument("dense rotator: padded dim " + std::to_string(dp) + " above " +
                                   std::to_string(kMaxDenseDim) + "; use the fht rotator");
  }
  const int n = static_cast<int>(dp);
  // Small factorisations are dominated by OpenBLAS's thread start-up and
  // spin-waits (measured: 10x slower at D' = 128 on 2 busy cores).
  std::optional<ScopedSingleThreadedBlas> single_threaded;
  if (dp <= kSingleThreadedQrDim) single_threaded.emplace();
  std::vector<double> a(dp * dp);
  Xoshiro256 rng(seed);
  for (double& v : a) v = rng.Normal();

  std::vector<double> tau(dp);
  int info = 0;
  int lwork = -1;
  double work_query = 0.0;
  dgeqrf_(&n, &n, a.data(), &n, tau.data(), &work_query, &lwork, &info);
  if (info != 0) return Status::InvalidArgument("dense rotator: dgeqrf workspace query failed");
  int lwork_orgqr = -1;
  double work_query_orgqr = 0.0;
  dorgqr_(&n, &n, &n, a.data(), &n, tau.data(), &work_query_orgqr, &lwork_orgqr, &info);
  if (info != 0) return Status::InvalidArgument("dense rotator: dorgqr workspace query failed");
  lwork = static_cast<int>(std::max(work_query, work_query_orgqr)) + n;
  std::vector<double> work(static_cast<std::size_t>(lwork));

  dgeqrf_(&n, &n, a.data(), &n, tau.data(), work.data(), &lwork, &info);
  if (info != 0) return Status::InvalidArgument("dense rotator: dgeqrf failed");
  // R is in the upper triangle (column-major, a[i + j*n]); keep sign(R_jj)
  // before dorgqr overwrites it. A zero diagonal has probability 0 for a
  // Gaussian matrix; treat it as +1.
  std::vector<double> sign(dp);
  for (std::size_t j = 0; j < dp; ++j) sign[j] = a[j + j * dp] < 0.0 ? -1.0 : 1.0;
  dorgqr_(&n, &n, &n, a.data(), &n, tau.data(), work.data(), &lwork, &info);
  if (info != 0) return Status::InvalidArgument("dense rotator: dorgqr failed");

  std::vector<float> matrix(dp * dp);
  for (std::size_t i = 0; i < dp; ++i) {
    for (std::size_t j = 0; j < dp; ++j) {
      matrix[i * dp + j] = static_cast<float>(a[i + j * dp] * sign[j]);
    }
  }
  return std::unique_ptr<Rotator>(new DenseRotator(dim, seed, std::move(matrix)));
}

Result<std::unique_ptr<Rotator>> ReadDenseRotator(std::size_t dim, std::uint64_t seed,
                                                  std::span<const std::uint8_t> body) {
  const std::size_t dp = PaddedDim(dim);
  if (dp > kMaxDenseDim || body.size() != dp * dp * sizeof(float)) {
    return Status::Corruption("dense rotator blob: body of " + std::to_string(body.size()) +
                              " bytes for padded dim " + std::to_string(dp));
  }
  std::vector<float> matrix(dp * dp);
  std::memcpy(matrix.data(), body.data(), body.size());
  for (float v : matrix) {
    if (!std::isfinite(v) || std::fabs(v) > 1.0f + 1e-3f) {
      return Status::Corruption("dense rotator blob: entry outside [-1, 1]");
    }
  }
  return std::unique_ptr<Rotator>(new DenseRotator(dim, seed, std::move(matrix)));
}

}  // namespace strata::quant::rabitq
