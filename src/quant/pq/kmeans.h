// Lloyd's k-means under squared L2, trained on a bounded random sample.
//
// Lloyd, "Least squares quantization in PCM" (1982); k-means++ seeding from
// Arthur & Vassilvitskii, "k-means++: The Advantages of Careful Seeding"
// (SODA 2007). Used for PQ codebooks (k = 256 per subspace) and IVF coarse
// centroids (k up to ~N/1024; for very large k see hierarchical_kmeans.h).
//
// - Assignment is an sgemm per tile (nearest.h), parallel over rows with
//   OpenBLAS single-threaded inside (no oversubscription).
// - Empty clusters are repaired by moving the sample rows farthest from their
//   centroid into them (taking rows only from clusters that keep a member).
//   Unlike faiss's centroid splitting this never increases the objective, so
//   the recorded objective is non-increasing from one iteration to the next
//   (up to float rounding in the sgemm expansion).
// - Deterministic: the same data, options and seed give bit-identical
//   centroids whatever `threads` is (fixed tiles, per-cluster sums in a fixed
//   order).
#ifndef STRATA_QUANT_PQ_KMEANS_H_
#define STRATA_QUANT_PQ_KMEANS_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "quant/pq/sample.h"
#include "strata/result.h"
#include "strata/status.h"

namespace strata::quant {

// How the initial centroids are chosen.
enum class KMeansInit : std::uint8_t {
  // k distinct sample rows uniformly at random (faiss's default). O(k d).
  kRandomRows = 0,
  // k-means++ D^2 seeding: better starts; k sequential passes over the
  // seeding subset (KMeansOptions::init_rows_per_centroid bounds it).
  kKMeansPlusPlus = 1,
};

struct KMeansOptions {
  // Number of clusters (required, >= 1; the sample must hold >= k rows).
  std::size_t k = 0;
  // Lloyd iterations (assignment + update); 0 returns the initial centroids.
  int iterations = 20;
  // Default k-means++ on a small subset: on 262,144 x 128 clustered rows at
  // k = 1,024 it ends 10 Lloyd iterations ~3% below random rows (and below
  // faiss) for ~1% of one iteration's time (bench/results/quant_pq.md).
  KMeansInit init = KMeansInit::kKMeansPlusPlus;
  // k-means++ seeds from a random subset of at most k * this many sample
  // rows (0 = all rows): seeding is k sequential passes over its input, and a
  // subset of a few rows per centroid gives as good a start (measured: 8 rows
  // per centroid was no worse than 32 or all rows).
  std::size_t init_rows_per_centroid = 8;
  // Seed of every random choice (sample, initial rows, k-means++ draws).
  std::uint64_t seed = 1234;
  // Worker threads; 0 = all hardware threads.
  unsigned threads = 0;
  // Bound on the training sample in bytes of float32 rows (128 MiB: 262,144
  // rows at d = 128). 0 = no byte bound.
  std::size_t max_sample_bytes = kDefaultMaxSampleBytes;
  // Also cap the sample at k * this many rows (faiss's
  // max_points_per_centroid, 256 there by default). 0 = no cap.
  std::size_t max_points_per_centroid = 0;
  // Stop early when an iteration improves the objective by less than this
  // fraction of it. 0 = always run `iterations`.
  double tolerance = 0.0;
  // Balanced (capacitated) assignment during training: 0 = off (plain
  // Lloyd); otherwise >= 1.0 and no cluster holds more than
  // ceil(balance_factor * sample_rows / k) rows in any assignment step (see
  // balanced_assign.h). The monotone-objective guarantee holds only when off.
  double balance_factor = 0.0;
  // Candidate centroids per row for balanced assignment (>= 1).
  std::size_t balance_candidates = 8;

  // InvalidArgument naming the first bad field.
  Status Validate() const;
};

struct KMeansResult {
  std::size_t k = 0;
  std::size_t dim = 0;
  // Final centroids, row-major, size k * dim.
  std::vector<float> centroids;
  // objective[t] = sum over sample rows of the squared L2 distance to the
  // centroid assigned in iteration t (centroids as they were at the start of
  // iteration t). Size = iterations run.
  std::vector<double> objective;
  // Rows the model was trained on.
  std::size_t sample_rows = 0;
  // Empty clusters repaired, summed over iterations.
  std::size_t empty_clusters_repaired = 0;
};

// Trains k-means on n rows of `data` (size n * d, float32, row-major; only
// the sampled rows are read). The sample is SampleRowCount(n, d,
// max_sample_bytes, k * max_points_per_centroid) rows drawn with the seed.
// Fails with InvalidArgument on bad options, null data, d == 0, a sample
// smaller than k rows (too few rows, or max_sample_bytes too small for k rows
// of this d) or non-finite values in the sample.
Result<KMeansResult> TrainKMeans(const float* data, std::size_t n, std::size_t d,
                                 const KMeansOptions& options);

// Same, without sampling: trains on all n rows of `data` (options'
// max_sample_bytes / max_points_per_centroid are ignored). Used when the
// caller already holds a sample (hierarchical k-means, PQ subspaces).
Result<KMeansResult> TrainKMeansOnRows(const float* data, std::size_t n, std::size_t d,
                                       const KMeansOptions& options);

// Same as TrainKMeansOnRows but starting from `initial_centroids` (size
// options.k * d) instead of seeding: warm starts when a model is refined
// repeatedly (OPQ alternations). options.init is ignored.
Result<KMeansResult> TrainKMeansFrom(const float* data, std::size_t n, std::size_t d,
                                     const float* initial_centroids,
                                     const KMeansOptions& options);

// The k-means objective of `centroids` (size k * d) on `data` (n * d): sum of
// squared distances to the nearest centroid, accumulated in double.
Result<double> KMeansObjective(const float* data, std::size_t n, std::size_t d,
                               const float* centroids, std::size_t k, unsigned threads = 0);

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_KMEANS_H_
