// Internal training steps of ProductQuantizer (not a public header): per-
// subspace codebook k-means and OPQ rotation learning.
#ifndef STRATA_QUANT_PQ_PQ_TRAINING_H_
#define STRATA_QUANT_PQ_PQ_TRAINING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant/pq/product_quantizer.h"
#include "strata/status.h"

namespace strata::quant::internal {

// Trains 256 centroids per subspace on the n rows of x (n * d, already
// centred/rotated as the quantizer will see them), `iterations` Lloyd
// iterations each. With warm_start, `centroids` (256 * d, ProductQuantizer
// layout) holds the starting codebook; otherwise it is resized and seeded per
// options.init. Parallel over subspaces when there are at least as many as
// threads, else over rows. Deterministic.
Status TrainSubspaceCodebooks(const float* x, std::size_t n, std::size_t d,
                              const std::vector<std::uint32_t>& offsets, const PqOptions& options,
                              int iterations, bool warm_start, std::vector<float>* centroids);

// Encodes n rows of x (n * d) against `centroids` (ProductQuantizer layout)
// into codes (n * m) with all `threads`.
void EncodeRows(const float* x, std::size_t n, std::size_t d,
                const std::vector<std::uint32_t>& offsets, const std::vector<float>& centroids,
                unsigned threads, std::uint8_t* codes);

// Rows encoded one at a time below this count (EncodeFewRows): an insert
// encodes one vector, where the sgemm path spends its time building per-
// subspace centroid norms and calling BLAS on one-row tiles.
inline constexpr std::size_t kFewRows = 8;

// EncodeRows for a handful of rows on the calling thread, with exact
// (direct-difference) distances, ties to the lower centroid: no BLAS, no
// allocation. Agrees with EncodeRows except where two centroids are within
// the sgemm expansion's rounding of each other.
void EncodeFewRows(const float* x, std::size_t n, std::size_t d,
                   const std::vector<std::uint32_t>& offsets, const std::vector<float>& centroids,
                   std::uint8_t* codes);

// Non-parametric OPQ (Ge, He, Ke, Sun, "Optimized Product Quantization",
// CVPR 2013 / TPAMI 2014): alternates (1) refining the codebooks on X R and
// (2) the orthogonal Procrustes update R = U V^T from the SVD of X^T Y, Y the
// reconstructions of X R; options.opq_iterations alternations, each refining
// the codebooks for options.opq_pq_iterations. On return `rotation` (d * d,
// row-major; a row x maps to x R) and a codebook for X R refined by
// options.iterations. x: n * d rows (centred if the quantizer centres).
Status TrainOpq(const float* x, std::size_t n, std::size_t d,
                const std::vector<std::uint32_t>& offsets, const PqOptions& options,
                std::vector<float>* rotation, std::vector<float>* centroids);

// y (n * d) = x (n * d) R (d * d), single-threaded sgemm per call.
void Rotate(const float* x, std::size_t n, std::size_t d, const float* rotation, float* y);

}  // namespace strata::quant::internal

#endif  // STRATA_QUANT_PQ_PQ_TRAINING_H_
