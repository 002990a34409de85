// Product quantization with 8-bit codes and asymmetric distance computation.
//
// Jegou, Douze, Schmid, "Product Quantization for Nearest Neighbor Search",
// IEEE TPAMI 2011. A d-dimensional vector is split into m contiguous
// subspaces; each is replaced by the index of its nearest of 256 centroids
// (one byte), so a code is m bytes (8 to 192 in practice). Query-to-code
// distances are sums of m table entries (ADC, pq_adc.h).
//
// - Uneven splits are fine: with d = q m + r, the first r subspaces get q + 1
//   dimensions and the rest q (DiskANN's layout).
// - Optional centring: the training-sample mean is subtracted before
//   quantization and added back on decode. Per-subspace k-means is
//   translation-equivariant, so centring changes the codebook only through
//   floating-point precision (the sgemm expansion loses precision far from
//   the origin); ADC tables fold the mean back in, so distances stay those
//   to the decoded vector for every metric, inner product included (unlike
//   DiskANN, which must not centre for IP because it drops the mean).
// - Optional OPQ (PqOptions::opq_iterations > 0): an orthogonal rotation R
//   learned jointly with the codebooks (Ge et al., "Optimized Product
//   Quantization", CVPR 2013) spreads variance evenly over the subspaces; a
//   vector x is quantized as (x - mean) R. Tables, encode and decode apply it,
//   so callers never see the rotated space.
// - Immutable after training: all const methods are thread-safe.
#ifndef STRATA_QUANT_PQ_PRODUCT_QUANTIZER_H_
#define STRATA_QUANT_PQ_PRODUCT_QUANTIZER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "quant/pq/kmeans.h"
#include "quant/pq/pq_kernels.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::quant {

struct PqOptions {
  // Subspaces = bytes per code (required; 1 <= m <= d).
  std::size_t m = 0;
  // Subtract the training mean before quantizing (see file comment).
  bool center = true;
  // Lloyd iterations per subspace.
  int iterations = 20;
  // Subspace k-means seeding; k-means++ is affordable at k = 256.
  KMeansInit init = KMeansInit::kKMeansPlusPlus;
  // Training sample bound in bytes of full float32 rows (128 MiB).
  std::size_t max_sample_bytes = kDefaultMaxSampleBytes;
  // Also cap the sample at this many rows (faiss trains PQ on 256 x 256 =
  // 65,536 rows by default). 0 = only the byte bound.
  std::size_t max_train_rows = 65536;
  std::uint64_t seed = 1234;
  // Worker threads for training and encoding; 0 = all hardware threads.
  unsigned threads = 0;
  // OPQ: alternations of codebook refinement and rotation update; 0 = plain
  // PQ. Recall keeps improving up to ~50 (faiss's default; measured at d = 64,
  // m = 8: recall@10 0.45 plain, 0.55 / 0.66 / 0.77 after 10 / 25 / 50). Each
  // costs ~opq_pq_iterations PQ iterations plus a d x d SVD; queries pay a
  // d x d rotation per table (O(d^2)).
  int opq_iterations = 0;
  // Lloyd iterations per subspace inside each OPQ alternation (warm-started).
  int opq_pq_iterations = 4;

  // InvalidArgument naming the first bad field (m is checked against d by
  // ProductQuantizer::Train).
  Status Validate() const;
};

// Per-query ADC table: values[j * 256 + c] is the contribution of centroid c
// of subspace j; the distance of a code is bias + sum_j values[j*256+code[j]].
// Reusable across queries (Compute* resize it); not shared between threads
// while being filled.
struct PqDistanceTable {
  Metric metric = Metric::kL2;
  std::size_t m = 0;
  float bias = 0.0f;
  std::vector<float> values;  // m * 256
};

class ProductQuantizer {
 public:
  static constexpr std::size_t kCentroids = kPqCentroids;

  // An empty quantizer (m() == 0); use Train or Deserialize.
  ProductQuantizer() = default;

  // Trains on n rows of `data` (n * d floats; only a sample is read: up to
  // min(max_sample_bytes / (4 d), max_train_rows) rows drawn with the seed).
  // InvalidArgument on bad options, m > d, d == 0, null data, fewer than 256
  // sample rows (use a flat index below that), or non-finite values.
  static Result<ProductQuantizer> Train(const float* data, std::size_t n, std::size_t d,
                                        const PqOptions& options);

  // Builds a quantizer from explicit parts (deserialization, tests):
  // subspace boundaries `offsets` (m + 1 entries, 0 = offsets[0] < ... <
  // offsets[m] = d), `mean` (d floats, or empty for no centring),
  // `centroids`: for each subspace j, 256 x dsub_j row-major floats, the
  // subspaces one after another (256 * d floats in all), and `rotation`
  // (d * d row-major orthogonal matrix R, or empty for none).
  // InvalidArgument if the shapes disagree, a value is not finite or the
  // rotation is not orthogonal (|R R^T - I| > 1e-3 entrywise).
  static Result<ProductQuantizer> FromParts(std::size_t d, std::vector<std::uint32_t> offsets,
                                            std::vector<float> mean, std::vector<float> centroids,
                                            std::vector<float> rotation = {});

  std::size_t dim() const { return d_; }
  // Subspaces; also the code size in bytes.
  std::size_t m() const { return m_; }
  std::size_t code_size() const { return m_; }
  bool centered() const { return !mean_.empty(); }
  // First dimension of subspace j (j <= m; subspace_offset(m) == d).
  std::size_t subspace_offset(std::size_t j) const { return offsets_[j]; }
  std::size_t subspace_dim(std::size_t j) const { return offsets_[j + 1] - offsets_[j]; }
  const std::vector<std::uint32_t>& offsets() const { return offsets_; }
  // Training mean (d floats) or empty when not centred.
  const std::vector<float>& mean() const { return mean_; }
  // OPQ rotation R (d * d row-major) or empty.
  const std::vector<float>& rotation() const { return rotation_; }
  // Codebook layout as in FromParts (256 * d floats), in the rotated space
  // when rotation() is set.
  const std::vector<float>& centroids() const { return centroids_; }
  // Centroid c of subspace j (subspace_dim(j) floats, without the mean).
  const float* centroid(std::size_t j, std::size_t c) const {
    return centroids_.data() + kCentroids * offsets_[j] + c * subspace_dim(j);
  }

  // Encodes n rows of x (n * dim()) into codes (n * m() bytes): per subspace,
  // the nearest centroid. Deterministic; `threads` = 0 uses all cores.
  // InvalidArgument on an untrained quantizer or null pointers with n > 0.
  Status Encode(const float* x, std::size_t n, std::uint8_t* codes, unsigned threads = 0) const;

  // Decodes n codes (n * m() bytes) into out (n * dim() floats): the
  // concatenated subspace centroids y, mapped back as mean + y R^T.
  Status Decode(const std::uint8_t* codes, std::size_t n, float* out) const;

  // Fills `table` for `query` (dim() floats) so that the ADC distance of a
  // code equals the metric's distance between the query and the decoded code:
  //   kL2:           ||q - decode(code)||^2
  //   kInnerProduct: -<q, decode(code)>
  //   kCosine:       1 - <q, decode(code)>; the caller passes a unit-norm
  //                  query (and encoded unit-norm data): cosine = IP there.
  // Cost: 256 * dim() multiply-adds. InvalidArgument on an untrained
  // quantizer, null pointers or an unknown metric.
  Status ComputeDistanceTable(const float* query, Metric metric, PqDistanceTable* table) const;

  // Versioned, checksummed byte image of the codebook (layout in
  // product_quantizer_io.cc) for the index formats to store.
  std::vector<std::uint8_t> Serialize() const;
  // Parses Serialize() output. Corruption on a bad magic, checksum, size or
  // shape; NotSupported on an unknown version.
  static Result<ProductQuantizer> Deserialize(std::span<const std::uint8_t> bytes);

 private:
  void BuildTransposed();
  // out (rows * d) = (x - mean) R for `rows` rows (mean / R skipped when
  // absent). Single-threaded.
  void Preprocess(const float* x, std::size_t rows, float* out) const;

  std::size_t d_ = 0;
  std::size_t m_ = 0;
  std::vector<std::uint32_t> offsets_;  // m + 1
  std::vector<float> mean_;             // d or empty
  std::vector<float> centroids_;        // per subspace 256 x dsub, row-major
  std::vector<float> centroids_t_;      // per subspace dsub x 256 (for ADC tables)
  std::vector<float> rotation_;         // d x d or empty
};

// The uneven split used by ProductQuantizer: m + 1 offsets over d dims, the
// first d % m subspaces one dimension longer. Requires 1 <= m <= d.
std::vector<std::uint32_t> SubspaceOffsets(std::size_t d, std::size_t m);

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_PRODUCT_QUANTIZER_H_
