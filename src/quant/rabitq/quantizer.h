// RaBitQ, extended RaBitQ and Split-RaBitQ for IVF lists.
//
// Papers: Gao & Long, "RaBitQ: Quantizing High-Dimensional Vectors with a
// Theoretical Error Bound for Approximate Nearest Neighbor Search" (SIGMOD
// 2024); Gao et al., "Practical and Asymptotically Optimal Quantization of
// High-Dimensional Vectors in Euclidean Space for ANN Search" (extended
// RaBitQ, SIGMOD 2025); Xu et al., "RaBitQ-SSD: Split Codes and Pipelined I/O
// for SSD-Resident Vector Search" (Split-RaBitQ). Formulas follow the RaBitQ
// library (VectorDB-NTU/RaBitQ-Library) and RaBitQ-SSD.
//
// Each vector o is coded relative to a centre c (its IVF centroid), after the
// random rotation P (rotator.h), in D' = PaddedDim(d) dimensions. With
// r = P(o - c), b_i = [r_i > 0], u = b - 1/2 (entries +-1/2), and for a
// query q (rotated, not centred):
//   <r, q - c> ~= ||r||^2 <u, q - c> / <u, r>        (unbiased over P)
//   <u, q - c>  = <b, q> - sum(q)/2 - <u, c>
// so a distance estimate is  f_add + g_add + f_rescale * (<b, q> + k)  with
// per-vector factors f_*, per-(query, cluster) terms g_*, k = -sum(q)/2, and
// <b, q> from FastScan. Metrics ("smaller is nearer", strata/types.h):
//   L2:      ||o - q||^2 = ||r||^2 + ||q - c||^2 - 2 <r, q - c>
//            g_add = ||q - c||^2
//   IP:      -<o, q> = -<q, c> - <r, c> - <r, q - c>     g_add = -<q, c>
//   cosine:  IP on normalised vectors plus 1 (the quantizer normalises data
//            vectors and queries itself; centroids are used as given: any
//            centre is valid, the mean of the normalised members is best).
// and g_error = ||q - c|| for all metrics; lower bound = est - f_error * g_error.
//
// In-RAM prefix estimator (Split-RaBitQ): only the first D_m bits of b are
// in RAM; with s = D'/D_m and <.>_m the sum over the first D_m coordinates,
//   L2:  f_add = ||r||^2 + 2 s ||r||^2 <u, c>_m / <u, r>,  f_rescale = -2 s ||r||^2 / <u, r>
//   IP:  f_add = -<r, c> + s ||r||^2 <u, c>_m / <u, r>,    f_rescale =   -s ||r||^2 / <u, r>
//   k = -sum_{i < D_m} q_i / 2
// which is unbiased (the prefix's share of the l1 mass of r is D_m/D' in
// expectation). Error factor (x2 for L2, x1 for IP/cosine):
//   D_m <  D':  f_error = eps_split * ||r|| / sqrt(D_m)           (LB_{D_m}, RaBitQ-SSD Thm 3.1)
//   D_m == D':  f_error = eps0 * ||r|| * sqrt((||r||^2 ||u||^2 / <u, r>^2 - 1) / (D' - 1))
//               (RaBitQ's per-vector bound; ||u||^2 = D'/4)
// Measured violation rates (lower > true distance; estimator_test.cc,
// bench/results/quant_rabitq.md): full code, eps0 = 1.9: 1 - Phi(1.9 /
// sqrt(1 - beta^2)), at most 2.9 % (beta = 0); split, eps = 1.9, D' = 768,
// D_m = 384: 1.7-2.2 % at beta = 1/2, 0.2 % at beta = 0.9 (RaBitQ-SSD A.4).
//
// Re-ranking (SSD record): the full B-bit code, ex = B - 1, grid vector
// w_i = sign(r_i) (k_i + 1/2) (ex_code.h; for B = 1, w = u), and
//   L2:  f_add_ex = ||r||^2 + 2 ||r||^2 <w, c> / <w, r>,  f_rescale_ex = -2 ||r||^2 / <w, r>
//   IP:  f_add_ex = -<r, c> + ||r||^2 <w, c> / <w, r>,    f_rescale_ex =   -||r||^2 / <w, r>
//   <w, q> = 2^ex <b, q> + <k', q> - (2^B - 1)/2 * sum(q)
// where <b, q> = prefix part (FastScan or exact) + suffix part (from the
// record) and k' is the stored ex-code.
//
// A vector equal to its centre (r = 0) gets all-zero factors and is estimated
// exactly (est = g_add).
//
// Typical IVF use:
//   build:  auto qz = RabitqQuantizer::Create({.dim, .metric, .total_bits,
//           .prefix_dim}); per list, qz.EncodeCluster(vectors, n, centroid,
//           ram_blocks, ssd_records); store qz.Serialize() with the index.
//   search: qz.PrepareQuery(q, &query) once; per probed list
//           ForClusterFromDistances(||q - c||, <q, c>) (or ForCluster); per
//           block EstimateBatch, keep slots whose lower < current k-th
//           distance; for those, read the SSD record and Refine(query,
//           cluster, ExactPrefixIp(query, block, slot), record).
#ifndef STRATA_QUANT_RABITQ_QUANTIZER_H_
#define STRATA_QUANT_RABITQ_QUANTIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "quant/rabitq/ex_code.h"
#include "quant/rabitq/fastscan.h"
#include "quant/rabitq/layout.h"
#include "quant/rabitq/rotator.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::quant::rabitq {

// Largest B.
inline constexpr std::uint32_t kMaxTotalBits = 9;

struct RabitqOptions {
  // Input dimension d. Required, 1..kMaxRotatorDim (dense rotator: D' <= 4096).
  std::size_t dim = 0;
  // Distance the estimates approximate (strata/types.h conventions).
  Metric metric = Metric::kL2;
  // B: bits per coordinate, 1..9. 1 = sign bits only; B > 1 adds a
  // (B - 1)-bit ex-code to each SSD record.
  std::uint32_t total_bits = 1;
  // D_m: leading bits of each 1-bit code kept in RAM; a multiple of 64 in
  // [64, D']; 0 means D' (the whole code in RAM).
  std::size_t prefix_dim = 0;
  // Rotation: kFhtKac is O(D' log D') per vector; kDense is exact Haar but
  // O(D'^2) (see bench/results/quant_rabitq.md for the trade-off).
  RotatorKind rotator = RotatorKind::kFhtKac;
  // Seed of the rotation and of the kFast ex-code calibration.
  std::uint64_t seed = 0x5261426974510001ull;
  // eps0 of RaBitQ's bound, used for the in-RAM bound when D_m == D'.
  float epsilon0 = 1.9f;
  // eps of Split-RaBitQ's bound LB_{D_m}, used when D_m < D'.
  float split_epsilon = 1.9f;
  // How ex-codes pick their scale (ex_code.h). kFast by default: at D = 768
  // its refined estimates are within 2 % of kExact's RMS error for B = 3..9
  // while encoding is 4-14x faster (bench/results/quant_rabitq.md).
  ExCodeSearch ex_search = ExCodeSearch::kFast;

  // InvalidArgument naming the first bad field.
  Status Validate() const;
};

// Per-query state built by RabitqQuantizer::PrepareQuery; reusable across
// queries of the same quantizer (buffers are resized once). Read-only while
// estimates run, so one prepared query may be shared by several threads.
struct RabitqQuery {
  std::vector<float> rotated;     // D' floats: P q (q normalised first under cosine)
  std::vector<float> float_lut;   // num_tables * 16 floats (fastscan.h)
  std::vector<std::uint8_t> lut;  // num_tables * 16 quantised entries
  LutScale lut_scale;             // maps FastScan accumulators to <b, q>_prefix
  float sum_prefix = 0.0f;        // sum_{i < D_m} rotated[i]
  float sum_all = 0.0f;           // sum_i rotated[i]
};

// Per-(query, cluster) terms.
struct ClusterQueryFactors {
  float g_add = 0.0f;    // L2: ||q - c||^2; IP: -<q, c>; cosine: 1 - <q, c>
  float g_error = 0.0f;  // ||q - c||
};

// Estimates for the 32 slots of one RAM batch block.
struct alignas(64) BatchEstimates {
  float est[kBatchSize];        // estimated distance (unbiased, up to LUT rounding)
  float lower[kBatchSize];      // est - f_error * g_error
  float prefix_ip[kBatchSize];  // <b, q> over the prefix, from the quantised LUT
};

// The estimate of one slot (RabitqQuantizer::EstimateSlot).
struct SlotEstimate {
  float est = 0.0f;        // estimated distance
  float lower = 0.0f;      // est - f_error * g_error
  float prefix_ip = 0.0f;  // <b, q> over the prefix, exact in float
};

class RabitqQuantizer {
 public:
  // Validates `options` and builds the rotation (and, for kFast ex-codes,
  // the scale fraction). Errors: InvalidArgument from Validate / Rotator::Create.
  static Result<RabitqQuantizer> Create(const RabitqOptions& options);

  // Blob (little-endian), written by Serialize:
  //   [0, 4)   u32 magic 0x5A514252 ("RBQZ")   [4, 6) u16 version (1)
  //   [6]      u8 metric   [7] u8 total_bits   [8, 16) u64 dim
  //   [16, 24) u64 prefix_dim (resolved, never 0)   [24, 32) u64 seed
  //   [32, 36) f32 epsilon0   [36, 40) f32 split_epsilon
  //   [40]     u8 rotator kind   [41] u8 ex_search   [42, 48) reserved, 0
  //   [48, 56) f64 kFast ex-code fraction f (0 unless kFast and B > 1)
  //   [56, 64) u64 rotator blob size n   [64, 64 + n) rotator blob (rotator.h)
  //   [64 + n, 72 + n) u64 Checksum64 of bytes [0, 64 + n)
  void Serialize(std::vector<std::uint8_t>* out) const;
  // Corruption / NotSupported on a bad blob (same rules as Rotator).
  static Result<RabitqQuantizer> Deserialize(std::span<const std::uint8_t> blob);

  RabitqQuantizer(RabitqQuantizer&&) noexcept = default;
  RabitqQuantizer& operator=(RabitqQuantizer&&) noexcept = default;

  // Options with prefix_dim resolved (never 0).
  const RabitqOptions& options() const { return options_; }
  const Rotator& rotator() const { return *rotator_; }
  const RabitqLayout& layout() const { return layout_; }
  std::size_t dim() const { return options_.dim; }
  std::size_t padded_dim() const { return layout_.padded_dim; }
  std::size_t prefix_dim() const { return layout_.prefix_dim; }
  int ex_bits() const { return layout_.ex_bits; }
  // The kFast ex-code fraction f (ex_code.h; 0 when unused).
  double fast_ex_fraction() const { return fast_ex_fraction_; }

  // ---- Encoding (thread-safe; no shared mutable state) ----

  // Rotates a centroid (d floats -> D' floats). Centroids are never
  // normalised, whatever the metric.
  void RotateCentroid(const float* centroid, float* out) const;

  // Encodes one vector (d floats; normalised first under cosine) against a
  // rotated centroid (D' floats). `code` is resized as needed; when
  // `listed_code` is not null, the vector's listed code (layout.h,
  // layout().listed_code_bytes() bytes) is written there too.
  // InvalidArgument if the vector is not finite or (cosine) zero.
  Status Encode(const float* vector, const float* rotated_centroid, RabitqCode* code,
                std::uint8_t* listed_code = nullptr) const;
  // Same from an already rotated (and, for cosine, normalised) vector.
  Status EncodeRotated(const float* rotated_vector, const float* rotated_centroid,
                       RabitqCode* code, std::uint8_t* listed_code = nullptr) const;

  // Encodes the n vectors of one IVF list (n * d floats, row-major) against
  // its centroid (d floats, not rotated) straight into the packed layouts:
  //   ram_blocks:  ceil(n / 32) * layout().ram_batch_bytes() bytes; vector i
  //                is slot i % 32 of block i / 32
  //   ssd_records: n * layout().ssd_record_bytes() bytes, vector i at
  //                i * ssd_record_bytes()
  //   listed_codes: n * layout().listed_code_bytes() bytes, vector i at
  //                i * listed_code_bytes()
  // Any output may be null to skip it. Runs on `threads` threads (0 = all
  // cores). InvalidArgument (naming the row) on a non-finite or (cosine) zero
  // vector; the outputs are then unspecified.
  Status EncodeCluster(const float* vectors, std::size_t n, const float* centroid,
                       std::uint8_t* ram_blocks, std::uint8_t* ssd_records,
                       unsigned threads = 0, std::uint8_t* listed_codes = nullptr) const;

  // ---- Estimation (estimator.cc; thread-safe given distinct outputs) ----

  // Rotates the query (d floats; normalised under cosine) and builds its
  // tables. InvalidArgument if not finite or (cosine) zero.
  Status PrepareQuery(const float* query, RabitqQuery* out) const;

  // g_add / g_error for a cluster from its rotated centroid (D' floats).
  ClusterQueryFactors ForCluster(const RabitqQuery& query, const float* rotated_centroid) const;
  // The same from quantities a coarse quantizer already has: the Euclidean
  // distance ||q - c|| (not squared) and <q, c> (rotation-invariant; for
  // cosine, q normalised).
  ClusterQueryFactors ForClusterFromDistances(float distance, float inner_product) const;

  // FastScan estimates for the 32 slots of a RAM batch block, using
  // BestFastScanKernels(). Slots past the list's end hold garbage to ignore.
  void EstimateBatch(const RabitqQuery& query, const ClusterQueryFactors& cluster,
                     const std::uint8_t* block, BatchEstimates* out) const;
  // The same with an explicit kernel (tests and benchmarks compare ISAs).
  void EstimateBatch(const RabitqQuery& query, const ClusterQueryFactors& cluster,
                     const std::uint8_t* block, const FastScanKernels& kernels,
                     BatchEstimates* out) const;

  // The estimate of one slot of a RAM batch block, from ExactPrefixIp: for a
  // search that needs a few scattered slots (a listed set of rows), where
  // FastScan would estimate 31 unwanted neighbours of each. Equal to
  // EstimateBatch's up to its LUT rounding.
  SlotEstimate EstimateSlot(const RabitqQuery& query, const ClusterQueryFactors& cluster,
                            const std::uint8_t* block, std::size_t slot) const;

  // The estimate of one slot from its listed code (layout.h; 2 bits a
  // coordinate, listed_code.cc): the prefix sign bits from the RAM block,
  // the rest from `listed_code`. Its error bound is RaBitQ's with the 2-bit
  // code's <o_bar, o> (about 0.94 against 0.80 for 1 bit at D' = 128), so its
  // lower bound is about 3x tighter than EstimateSlot's. prefix_ip is
  // ExactPrefixIp's, for Refine.
  SlotEstimate EstimateListed(const RabitqQuery& query, const ClusterQueryFactors& cluster,
                              const std::uint8_t* block, std::size_t slot,
                              const std::uint8_t* listed_code) const;

  // <b, q> over the prefix of slot `slot` computed exactly in float from the
  // float tables (no LUT rounding); O(D_m / 4).
  float ExactPrefixIp(const RabitqQuery& query, const std::uint8_t* block, std::size_t slot) const;

  // The full B-bit estimate from the SSD record, given <b, q> over the prefix
  // (ExactPrefixIp for the most accurate value, or the FastScan prefix_ip).
  float Refine(const RabitqQuery& query, const ClusterQueryFactors& cluster, float prefix_ip,
               const std::uint8_t* ssd_record) const;

 private:
  RabitqQuantizer(const RabitqOptions& options, std::unique_ptr<Rotator> rotator,
                  double fast_ex_fraction);

  // <b, q> over the code suffix (coordinates [D_m, D')) from its canonical
  // bytes; 0 when D_m == D'.
  double SuffixIp(const RabitqQuery& query, const std::uint8_t* suffix_bits) const;
  // The listed code of rotated vector o against rotated centre c, given its
  // canonical 1-bit code (listed_code.cc). r = o - c must be non-zero.
  void EncodeListedCode(const float* o, const float* c, const std::vector<std::uint8_t>& bits,
                        std::uint8_t* out) const;

  RabitqOptions options_;
  RabitqLayout layout_;
  std::unique_ptr<Rotator> rotator_;
  double fast_ex_fraction_ = 0.0;
};

}  // namespace strata::quant::rabitq

#endif  // STRATA_QUANT_RABITQ_QUANTIZER_H_
