// OPQ rotation learning (see TrainOpq in pq_training.h).
#include <cblas.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/pq_training.h"
#include "base/random.h"

// LAPACK's SVD from OpenBLAS (no lapacke.h in Debian's openblas-dev). The two
// trailing arguments are gfortran's hidden lengths of the character
// arguments.
extern "C" void sgesvd_(const char* jobu, const char* jobvt, const int* m, const int* n, float* a,
                        const int* lda, float* s, float* u, const int* ldu, float* vt,
                        const int* ldvt, float* work, const int* lwork, int* info,
                        std::size_t jobu_len, std::size_t jobvt_len);

namespace strata::quant::internal {
namespace {

constexpr std::size_t kK = ProductQuantizer::kCentroids;
constexpr std::uint64_t kOpqInitStream = 21;

float Gaussian(Xoshiro256& rng) {
  double u1 = rng.Uniform();
  if (u1 < 1e-300) u1 = 1e-300;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) *
                            std::cos(6.283185307179586 * rng.Uniform()));
}

// y = x R over row tiles in parallel (single-threaded sgemm per tile).
void RotateParallel(const float* x, std::size_t n, std::size_t d, const float* r, float* y,
                    unsigned threads) {
  ScopedSingleThreadedBlas blas_guard;
  ParallelForChunks(n, threads, 1024, [&](std::size_t b, std::size_t e, unsigned) {
    Rotate(x + b * d, e - b, d, r, y + b * d);
  });
}

// The orthogonal R minimising ||X R - Y||_F given M = X^T Y (d x d,
// row-major): R = U V^T for M = U S V^T (orthogonal Procrustes). LAPACK is
// column-major, so it sees A = M^T = V S U^T; with A = Ua S VTa, R = (Ua
// VTa)^T, whose row-major image is the column-major product Ua VTa.
Status Procrustes(std::vector<float> m, std::size_t d, std::vector<float>* rotation) {
  const int n = static_cast<int>(d);
  std::vector<float> s(d), ua(d * d), vta(d * d);
  int info = 0, lwork = -1;
  float query = 0;
  sgesvd_("A", "A", &n, &n, m.data(), &n, s.data(), ua.data(), &n, vta.data(), &n, &query,
          &lwork, &info, 1, 1);
  if (info != 0) return Status::Aborted("OPQ: SVD workspace query failed");
  lwork = static_cast<int>(query);
  std::vector<float> work(static_cast<std::size_t>(lwork));
  sgesvd_("A", "A", &n, &n, m.data(), &n, s.data(), ua.data(), &n, vta.data(), &n, work.data(),
          &lwork, &info, 1, 1);
  if (info != 0) {
    return Status::Aborted("OPQ: SVD did not converge (info " + std::to_string(info) + ")");
  }
  rotation->resize(d * d);
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, ua.data(), n, vta.data(),
              n, 0.0f, rotation->data(), n);
  return Status::OK();
}

}  // namespace

Status TrainOpq(const float* x, std::size_t n, std::size_t d,
                const std::vector<std::uint32_t>& offsets, const PqOptions& options,
                std::vector<float>* rotation, std::vector<float>* centroids) {
  const std::size_t m = offsets.size() - 1;
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;
  // Random orthogonal start (the polar factor of a Gaussian matrix is
  // Haar-distributed), as faiss's OPQMatrix does: from the identity the
  // alternation tends to stay near the axis-aligned split it starts from.
  {
    Xoshiro256 rng(MixSeed(options.seed, kOpqInitStream));
    std::vector<float> g(d * d);
    for (float& v : g) v = Gaussian(rng);
    STRATA_RETURN_IF_ERROR(Procrustes(std::move(g), d, rotation));
  }
  std::vector<float> xr(n * d), y(n * d), cross(d * d);
  std::vector<std::uint8_t> codes(n * m);
  bool warm = false;
  for (int it = 0; it < options.opq_iterations; ++it) {
    RotateParallel(x, n, d, rotation->data(), xr.data(), threads);
    STRATA_RETURN_IF_ERROR(TrainSubspaceCodebooks(xr.data(), n, d, offsets, options,
                                                  options.opq_pq_iterations, warm, centroids));
    warm = true;
    EncodeRows(xr.data(), n, d, offsets, *centroids, threads, codes.data());
    for (std::size_t r = 0; r < n; ++r) {  // reconstructions in the rotated space
      for (std::size_t j = 0; j < m; ++j) {
        const std::size_t off = offsets[j], dsub = offsets[j + 1] - off;
        const float* c = centroids->data() + kK * off + codes[r * m + j] * dsub;
        std::copy(c, c + dsub, y.data() + r * d + off);
      }
    }
    // cross = X^T Y (d x d); one large sgemm, OpenBLAS's own threads.
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<int>(d),
                static_cast<int>(d), static_cast<int>(n), 1.0f, x, static_cast<int>(d), y.data(),
                static_cast<int>(d), 0.0f, cross.data(), static_cast<int>(d));
    STRATA_RETURN_IF_ERROR(Procrustes(cross, d, rotation));
  }
  RotateParallel(x, n, d, rotation->data(), xr.data(), threads);
  return TrainSubspaceCodebooks(xr.data(), n, d, offsets, options, options.iterations, warm,
                                centroids);
}

}  // namespace strata::quant::internal
