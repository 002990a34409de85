#include "quant/pq/kmeans.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

#include "base/parallel.h"
#include "quant/pq/balanced_assign.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/kmeans_internal.h"
#include "quant/pq/nearest.h"
#include "base/random.h"

namespace strata::quant {

namespace internal {

// Rows are grouped by label (counting sort) and each cluster sums its own
// rows: parallel over clusters without per-thread k x d accumulators.
void UpdateCentroids(const float* x, std::size_t n, std::size_t d, std::size_t k,
                     const std::uint32_t* labels, const std::vector<std::size_t>& counts,
                     unsigned threads, float* centroids) {
  std::vector<std::size_t> offsets(k + 1, 0);
  for (std::size_t c = 0; c < k; ++c) offsets[c + 1] = offsets[c] + counts[c];
  std::vector<std::size_t> order(n);
  {
    std::vector<std::size_t> fill(offsets.begin(), offsets.end() - 1);
    for (std::size_t r = 0; r < n; ++r) order[fill[labels[r]]++] = r;
  }
  ParallelForChunks(k, threads, 16, [&](std::size_t cb, std::size_t ce, unsigned) {
    std::vector<double> sum(d);
    for (std::size_t c = cb; c < ce; ++c) {
      const std::size_t b = offsets[c], e = offsets[c + 1];
      if (b == e) continue;
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::size_t i = b; i < e; ++i) {
        const float* row = x + order[i] * d;
        for (std::size_t j = 0; j < d; ++j) sum[j] += row[j];
      }
      const double inv = 1.0 / static_cast<double>(e - b);
      float* out = centroids + c * d;
      for (std::size_t j = 0; j < d; ++j) out[j] = static_cast<float>(sum[j] * inv);
    }
  });
}

}  // namespace internal

Status KMeansOptions::Validate() const {
  if (k == 0) return Status::InvalidArgument("KMeansOptions.k must be >= 1");
  if (k >= std::numeric_limits<std::uint32_t>::max()) {
    return Status::InvalidArgument("KMeansOptions.k must be < 2^32");
  }
  if (iterations < 0) return Status::InvalidArgument("KMeansOptions.iterations must be >= 0");
  if (init != KMeansInit::kRandomRows && init != KMeansInit::kKMeansPlusPlus) {
    return Status::InvalidArgument("KMeansOptions.init is not a known KMeansInit");
  }
  if (!(tolerance >= 0.0)) return Status::InvalidArgument("KMeansOptions.tolerance must be >= 0");
  if (!(balance_factor == 0.0 || balance_factor >= 1.0)) {
    return Status::InvalidArgument("KMeansOptions.balance_factor must be 0 (off) or >= 1");
  }
  if (balance_candidates == 0) {
    return Status::InvalidArgument("KMeansOptions.balance_candidates must be >= 1");
  }
  return Status::OK();
}

namespace {

// Stream ids for MixSeed, so sampling and seeding draw independent numbers.
constexpr std::uint64_t kSampleStream = 1;
constexpr std::uint64_t kInitStream = 2;
constexpr std::uint64_t kInitSubsetStream = 4;

Status CheckFinite(const float* x, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (!std::isfinite(x[i])) {
      return Status::InvalidArgument("k-means: non-finite value in training data at element " +
                                     std::to_string(i));
    }
  }
  return Status::OK();
}

void InitRandomRows(const float* x, std::size_t n, std::size_t d, std::size_t k,
                    std::uint64_t seed, float* centroids) {
  const std::vector<std::size_t> rows = SampleRows(n, k, seed);
  for (std::size_t j = 0; j < k; ++j) {
    std::memcpy(centroids + j * d, x + rows[j] * d, d * sizeof(float));
  }
}

void InitKMeansPlusPlus(const float* x, std::size_t n, std::size_t d, std::size_t k,
                        std::uint64_t seed, unsigned threads, float* centroids) {
  Xoshiro256 rng(seed);
  std::vector<float> mind(n);
  std::size_t pick = static_cast<std::size_t>(rng.Below(n));
  for (std::size_t j = 0; j < k; ++j) {
    float* c = centroids + j * d;
    std::memcpy(c, x + pick * d, d * sizeof(float));
    if (j + 1 == k) break;
    ParallelFor(
        n, threads,
        [&](std::size_t i, unsigned) {
          const float dist = SquaredL2(x + i * d, c, d);
          mind[i] = (j == 0) ? dist : std::min(mind[i], dist);
        },
        4096);
    // Draw the next centre with probability proportional to D(x)^2. The sum
    // and scan are sequential so the draw is independent of `threads`.
    double total = 0;
    for (std::size_t i = 0; i < n; ++i) total += mind[i];
    if (!(total > 0)) {
      // Every row coincides with a centre (duplicates): any row will do;
      // the resulting duplicates are split by empty-cluster repair.
      pick = static_cast<std::size_t>(rng.Below(n));
      continue;
    }
    const double target = rng.Uniform() * total;
    double acc = 0;
    pick = n - 1;
    for (std::size_t i = 0; i < n; ++i) {
      acc += mind[i];
      if (acc > target && mind[i] > 0) {
        pick = i;
        break;
      }
    }
    // Rounding can leave the walk at a row already chosen (D = 0); take the
    // last row with positive D instead.
    if (mind[pick] <= 0) {
      for (std::size_t i = n; i-- > 0;) {
        if (mind[i] > 0) {
          pick = i;
          break;
        }
      }
    }
  }
}

// Moves rows into empty clusters: the rows farthest from their centroid,
// taken only from clusters that keep at least one member. Each move sets a
// row's distance to 0, so the objective can only fall. Returns the number of
// clusters repaired (all of them whenever n >= k).
std::size_t RepairEmptyClusters(std::size_t n, std::size_t k, std::uint32_t* labels,
                                float* dist, std::vector<std::size_t>* counts) {
  std::vector<std::size_t> empty;
  for (std::size_t c = 0; c < k; ++c) {
    if ((*counts)[c] == 0) empty.push_back(c);
  }
  if (empty.empty()) return 0;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return dist[a] > dist[b] || (dist[a] == dist[b] && a < b);
  });
  std::size_t next_empty = 0;
  for (std::size_t i = 0; i < n && next_empty < empty.size(); ++i) {
    const std::size_t r = order[i];
    if ((*counts)[labels[r]] <= 1) continue;
    --(*counts)[labels[r]];
    const std::size_t c = empty[next_empty++];
    labels[r] = static_cast<std::uint32_t>(c);
    dist[r] = 0.0f;
    (*counts)[c] = 1;
  }
  return next_empty;
}

}  // namespace

namespace {

// Lloyd's iterations on all n rows, from `initial` (k * d) if not null, else
// from options.init.
Result<KMeansResult> RunLloyd(const float* data, std::size_t n, std::size_t d,
                              const float* initial, const KMeansOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (d == 0) return Status::InvalidArgument("k-means: dimension must be >= 1");
  if (data == nullptr) return Status::InvalidArgument("k-means: null data");
  const std::size_t k = options.k;
  if (n < k) {
    return Status::InvalidArgument("k-means: " + std::to_string(n) +
                                   " training rows are fewer than k = " + std::to_string(k));
  }
  STRATA_RETURN_IF_ERROR(CheckFinite(data, n * d));
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;

  KMeansResult result;
  result.k = k;
  result.dim = d;
  result.sample_rows = n;
  result.centroids.resize(k * d);
  const std::uint64_t init_seed = MixSeed(options.seed, kInitStream);
  if (initial != nullptr) {
    std::memcpy(result.centroids.data(), initial, k * d * sizeof(float));
  } else if (options.init == KMeansInit::kKMeansPlusPlus) {
    const std::size_t rows = options.init_rows_per_centroid > 0
                                 ? std::min(n, k * options.init_rows_per_centroid)
                                 : n;
    if (rows < n) {
      std::vector<float> subset;
      GatherRows(data, d, SampleRows(n, rows, MixSeed(options.seed, kInitSubsetStream)), &subset);
      InitKMeansPlusPlus(subset.data(), rows, d, k, init_seed, threads, result.centroids.data());
    } else {
      InitKMeansPlusPlus(data, n, d, k, init_seed, threads, result.centroids.data());
    }
  } else {
    InitRandomRows(data, n, d, k, init_seed, result.centroids.data());
  }

  ScopedSingleThreadedBlas blas_guard;
  std::vector<std::uint32_t> labels(n);
  std::vector<float> dist(n);
  std::vector<std::size_t> counts(k);
  const std::size_t cap =
      options.balance_factor > 0
          ? static_cast<std::size_t>(std::ceil(options.balance_factor * static_cast<double>(n) /
                                               static_cast<double>(k)))
          : 0;
  for (int it = 0; it < options.iterations; ++it) {
    if (cap > 0) {
      STRATA_RETURN_IF_ERROR(AssignBalanced(data, n, d, result.centroids.data(), k, cap,
                                            labels.data(), dist.data(), threads,
                                            options.balance_candidates));
    } else {
      STRATA_RETURN_IF_ERROR(AssignNearest(data, n, d, result.centroids.data(), k,
                                           labels.data(), dist.data(), threads));
    }
    double objective = 0;
    for (std::size_t i = 0; i < n; ++i) objective += dist[i];
    result.objective.push_back(objective);

    std::fill(counts.begin(), counts.end(), 0);
    for (std::size_t i = 0; i < n; ++i) ++counts[labels[i]];
    result.empty_clusters_repaired +=
        RepairEmptyClusters(n, k, labels.data(), dist.data(), &counts);
    internal::UpdateCentroids(data, n, d, k, labels.data(), counts, threads,
                              result.centroids.data());

    if (options.tolerance > 0 && it > 0) {
      const double prev = result.objective[result.objective.size() - 2];
      if (prev - objective < options.tolerance * prev) break;
    }
  }
  return result;
}

}  // namespace

Result<KMeansResult> TrainKMeansOnRows(const float* data, std::size_t n, std::size_t d,
                                       const KMeansOptions& options) {
  return RunLloyd(data, n, d, nullptr, options);
}

Result<KMeansResult> TrainKMeansFrom(const float* data, std::size_t n, std::size_t d,
                                     const float* initial_centroids,
                                     const KMeansOptions& options) {
  if (initial_centroids == nullptr) {
    return Status::InvalidArgument("k-means: null initial centroids");
  }
  return RunLloyd(data, n, d, initial_centroids, options);
}

Result<KMeansResult> TrainKMeans(const float* data, std::size_t n, std::size_t d,
                                 const KMeansOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  if (d == 0) return Status::InvalidArgument("k-means: dimension must be >= 1");
  if (data == nullptr) return Status::InvalidArgument("k-means: null data");
  const std::size_t max_rows =
      options.max_points_per_centroid > 0 ? options.k * options.max_points_per_centroid : 0;
  const std::size_t m = SampleRowCount(n, d, options.max_sample_bytes, max_rows);
  if (m < options.k) {
    return Status::InvalidArgument(
        "k-means: the training sample holds " + std::to_string(m) + " rows (n = " +
        std::to_string(n) + ", max_sample_bytes = " + std::to_string(options.max_sample_bytes) +
        ") but k = " + std::to_string(options.k) + " needs at least k rows");
  }
  if (m == n) return TrainKMeansOnRows(data, n, d, options);
  std::vector<float> sample;
  GatherRows(data, d, SampleRows(n, m, MixSeed(options.seed, kSampleStream)), &sample);
  return TrainKMeansOnRows(sample.data(), m, d, options);
}

Result<double> KMeansObjective(const float* data, std::size_t n, std::size_t d,
                               const float* centroids, std::size_t k, unsigned threads) {
  std::vector<std::uint32_t> labels(n);
  std::vector<float> dist(n);
  STRATA_RETURN_IF_ERROR(
      AssignNearest(data, n, d, centroids, k, labels.data(), dist.data(), threads));
  double total = 0;
  for (const float v : dist) total += v;
  return total;
}

}  // namespace strata::quant
