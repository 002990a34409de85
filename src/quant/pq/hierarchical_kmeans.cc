#include "quant/pq/hierarchical_kmeans.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <queue>
#include <string>

#include "base/parallel.h"
#include "quant/pq/balanced_assign.h"
#include "quant/pq/blas_threads.h"
#include "quant/pq/kmeans_internal.h"
#include "quant/pq/nearest.h"
#include "base/random.h"

namespace strata::quant {
namespace {

constexpr std::uint64_t kSampleStream = 1;  // same stream as TrainKMeans
constexpr std::uint64_t kCoarseStream = 3;
constexpr std::uint64_t kGroupStreamBase = 1000;

// D'Hondt apportionment of k seats over groups of sizes[g] rows: every group
// gets one centroid, then each next centroid goes to the group with the most
// rows per centroid (ties to the lower index), never beyond its row count.
// Requires sum(sizes) >= k >= number of groups, all sizes >= 1.
std::vector<std::size_t> Apportion(const std::vector<std::size_t>& sizes, std::size_t k) {
  std::vector<std::size_t> seats(sizes.size(), 1);
  std::size_t given = sizes.size();
  // Priority: sizes[g] / seats[g], compared exactly as cross products.
  auto less = [&](std::size_t a, std::size_t b) {
    const unsigned __int128 lhs = static_cast<unsigned __int128>(sizes[a]) * seats[b];
    const unsigned __int128 rhs = static_cast<unsigned __int128>(sizes[b]) * seats[a];
    return lhs < rhs || (lhs == rhs && a > b);
  };
  std::priority_queue<std::size_t, std::vector<std::size_t>, decltype(less)> heap(less);
  for (std::size_t g = 0; g < sizes.size(); ++g) {
    if (sizes[g] > 1) heap.push(g);
  }
  while (given < k && !heap.empty()) {
    const std::size_t g = heap.top();
    heap.pop();
    ++seats[g];
    ++given;
    if (seats[g] < sizes[g]) heap.push(g);
  }
  return seats;
}

// Global Lloyd iterations over all fine centroids, assigning through the
// two-level structure (see HierarchicalOptions::refine_iterations).
Status Refine(const float* x, std::size_t m, const HierarchicalOptions& shape, unsigned threads,
              HierarchicalKMeans* model) {
  const std::size_t d = model->dim, k = model->k, groups = model->coarse_k();
  std::vector<std::uint32_t> labels(m);
  std::vector<float> dist(m);
  std::vector<std::size_t> counts(k);
  for (int it = 0; it < shape.refine_iterations; ++it) {
    STRATA_RETURN_IF_ERROR(AssignHierarchical(*model, x, m, shape.refine_probe, labels.data(),
                                              dist.data(), threads));
    double objective = 0;
    for (const float v : dist) objective += v;
    model->objective = objective;
    std::fill(counts.begin(), counts.end(), 0);
    for (const std::uint32_t l : labels) ++counts[l];
    internal::UpdateCentroids(x, m, d, k, labels.data(), counts, threads,
                              model->centroids.data());
    // Coarse centroid = mean of the rows its group's fine centroids hold.
    for (std::size_t g = 0; g < groups; ++g) {
      std::vector<double> sum(d, 0.0);
      std::size_t rows = 0;
      for (std::uint32_t j = model->group_offsets[g]; j < model->group_offsets[g + 1]; ++j) {
        const float* c = model->centroids.data() + std::size_t{j} * d;
        for (std::size_t i = 0; i < d; ++i) sum[i] += static_cast<double>(counts[j]) * c[i];
        rows += counts[j];
      }
      if (rows == 0) continue;
      float* cc = model->coarse_centroids.data() + g * d;
      for (std::size_t i = 0; i < d; ++i) cc[i] = static_cast<float>(sum[i] / rows);
    }
  }
  return Status::OK();
}

}  // namespace

Status HierarchicalOptions::Validate() const {
  if (refine_iterations < 0) {
    return Status::InvalidArgument("HierarchicalOptions.refine_iterations must be >= 0");
  }
  if (refine_probe == 0) {
    return Status::InvalidArgument("HierarchicalOptions.refine_probe must be >= 1");
  }
  return Status::OK();
}

Result<HierarchicalKMeans> TrainHierarchicalKMeans(const float* data, std::size_t n,
                                                   std::size_t d, const KMeansOptions& options,
                                                   const HierarchicalOptions& shape) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  STRATA_RETURN_IF_ERROR(shape.Validate());
  std::size_t coarse_k = shape.coarse_k;
  if (d == 0) return Status::InvalidArgument("hierarchical k-means: dimension must be >= 1");
  if (data == nullptr) return Status::InvalidArgument("hierarchical k-means: null data");
  const std::size_t k = options.k;
  if (coarse_k == 0) {
    coarse_k = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(k))));
  }
  coarse_k = std::clamp<std::size_t>(coarse_k, 1, k);
  const unsigned threads = options.threads == 0 ? DefaultThreads() : options.threads;

  // Sample once for both levels (same rule and seed stream as TrainKMeans).
  const std::size_t max_rows =
      options.max_points_per_centroid > 0 ? k * options.max_points_per_centroid : 0;
  const std::size_t m = SampleRowCount(n, d, options.max_sample_bytes, max_rows);
  if (m < k) {
    return Status::InvalidArgument("hierarchical k-means: the training sample holds " +
                                   std::to_string(m) + " rows but k = " + std::to_string(k) +
                                   " needs at least k rows (raise max_sample_bytes?)");
  }
  std::vector<float> sample_buf;
  const float* sample = data;
  if (m < n) {
    GatherRows(data, d, SampleRows(n, m, MixSeed(options.seed, kSampleStream)), &sample_buf);
    sample = sample_buf.data();
  }

  ScopedSingleThreadedBlas blas_guard;
  KMeansOptions coarse_opt = options;
  coarse_opt.k = coarse_k;
  coarse_opt.seed = MixSeed(options.seed, kCoarseStream);
  coarse_opt.threads = threads;
  STRATA_ASSIGN_OR_RETURN(KMeansResult coarse, TrainKMeansOnRows(sample, m, d, coarse_opt));

  // Final coarse assignment of the sample with the trained coarse centroids.
  std::vector<std::uint32_t> labels(m);
  if (options.balance_factor > 0) {
    const auto cap = static_cast<std::size_t>(
        std::ceil(options.balance_factor * static_cast<double>(m) / static_cast<double>(coarse_k)));
    STRATA_RETURN_IF_ERROR(AssignBalanced(sample, m, d, coarse.centroids.data(), coarse_k, cap,
                                          labels.data(), nullptr, threads,
                                          options.balance_candidates));
  } else {
    STRATA_RETURN_IF_ERROR(AssignNearest(sample, m, d, coarse.centroids.data(), coarse_k,
                                         labels.data(), nullptr, threads));
  }
  std::vector<std::size_t> counts(coarse_k, 0);
  for (const std::uint32_t l : labels) ++counts[l];
  // Keep non-empty groups only (renumbered in order).
  std::vector<std::size_t> group_of(coarse_k, 0), sizes, kept;
  for (std::size_t c = 0; c < coarse_k; ++c) {
    if (counts[c] == 0) continue;
    group_of[c] = kept.size();
    kept.push_back(c);
    sizes.push_back(counts[c]);
  }
  const std::size_t groups = kept.size();
  const std::vector<std::size_t> seats = Apportion(sizes, k);

  HierarchicalKMeans model;
  model.k = k;
  model.dim = d;
  model.sample_rows = m;
  model.coarse_centroids.resize(groups * d);
  model.group_offsets.assign(groups + 1, 0);
  for (std::size_t g = 0; g < groups; ++g) {
    std::memcpy(model.coarse_centroids.data() + g * d, coarse.centroids.data() + kept[g] * d,
                d * sizeof(float));
    model.group_offsets[g + 1] = model.group_offsets[g] + static_cast<std::uint32_t>(seats[g]);
  }
  model.centroids.resize(k * d);

  // Rows of each group, in row order.
  std::vector<std::size_t> row_offsets(groups + 1, 0);
  for (std::size_t g = 0; g < groups; ++g) row_offsets[g + 1] = row_offsets[g] + sizes[g];
  std::vector<std::size_t> order(m);
  {
    std::vector<std::size_t> fill(row_offsets.begin(), row_offsets.end() - 1);
    for (std::size_t r = 0; r < m; ++r) order[fill[group_of[labels[r]]]++] = r;
  }
  // Largest sub-problems first so the dynamic schedule ends balanced.
  std::vector<std::size_t> schedule(groups);
  std::iota(schedule.begin(), schedule.end(), std::size_t{0});
  std::sort(schedule.begin(), schedule.end(), [&](std::size_t a, std::size_t b) {
    const double ca = static_cast<double>(sizes[a]) * static_cast<double>(seats[a]);
    const double cb = static_cast<double>(sizes[b]) * static_cast<double>(seats[b]);
    return ca > cb || (ca == cb && a < b);
  });
  std::vector<Status> status(groups);
  std::vector<double> objective(groups, 0.0);
  ParallelFor(
      groups, threads,
      [&](std::size_t i, unsigned) {
        const std::size_t g = schedule[i];
        std::vector<float> rows(sizes[g] * d);
        for (std::size_t r = 0; r < sizes[g]; ++r) {
          std::memcpy(rows.data() + r * d, sample + order[row_offsets[g] + r] * d,
                      d * sizeof(float));
        }
        KMeansOptions sub = options;
        sub.k = seats[g];
        sub.seed = MixSeed(options.seed, kGroupStreamBase + kept[g]);
        sub.threads = 1;
        Result<KMeansResult> fine = TrainKMeansOnRows(rows.data(), sizes[g], d, sub);
        if (!fine.ok()) {
          status[g] = fine.status();
          return;
        }
        std::memcpy(model.centroids.data() + std::size_t{model.group_offsets[g]} * d,
                    fine->centroids.data(), seats[g] * d * sizeof(float));
        if (!fine->objective.empty()) {
          objective[g] = fine->objective.back();
        } else {
          // iterations = 0: measure the initial centroids.
          Result<double> obj =
              KMeansObjective(rows.data(), sizes[g], d, fine->centroids.data(), seats[g], 1);
          if (obj.ok()) objective[g] = *obj;
        }
      },
      1);
  for (std::size_t g = 0; g < groups; ++g) {
    if (!status[g].ok()) return status[g].WithContext("hierarchical k-means group");
    model.objective += objective[g];
  }
  STRATA_RETURN_IF_ERROR(Refine(sample, m, shape, threads, &model));
  return model;
}

Status AssignHierarchical(const HierarchicalKMeans& model, const float* x, std::size_t n,
                          std::size_t probe, std::uint32_t* labels, float* distances,
                          unsigned threads) {
  const std::size_t groups = model.coarse_k();
  const std::size_t d = model.dim;
  if (groups == 0 || d == 0 || model.centroids.size() != model.k * d ||
      model.coarse_centroids.size() != groups * d || model.group_offsets.back() != model.k) {
    return Status::InvalidArgument("AssignHierarchical: empty or inconsistent model");
  }
  if (n == 0) return Status::OK();
  if (x == nullptr || labels == nullptr) {
    return Status::InvalidArgument("AssignHierarchical: null input or output");
  }
  if (threads == 0) threads = DefaultThreads();
  probe = std::clamp<std::size_t>(probe, 1, groups);

  std::vector<std::uint32_t> coarse(n * probe);
  std::vector<float> coarse_dist(n * probe);
  STRATA_RETURN_IF_ERROR(AssignTopK(x, n, d, model.coarse_centroids.data(), groups, probe,
                                    coarse.data(), coarse_dist.data(), threads));
  // Bucket (row, slot) pairs by coarse group so each group's fine centroids
  // are searched once, as sgemm tiles, for all rows probing it.
  std::vector<std::size_t> offsets(groups + 1, 0);
  for (const std::uint32_t g : coarse) ++offsets[g + 1];
  for (std::size_t g = 0; g < groups; ++g) offsets[g + 1] += offsets[g];
  std::vector<std::size_t> entries(n * probe);  // index into coarse[] (row * probe + slot)
  {
    std::vector<std::size_t> fill(offsets.begin(), offsets.end() - 1);
    for (std::size_t i = 0; i < n * probe; ++i) entries[fill[coarse[i]]++] = i;
  }
  std::vector<std::uint32_t> fine_label(n * probe);
  std::vector<float> fine_dist(n * probe);
  ScopedSingleThreadedBlas blas_guard;
  ParallelFor(
      groups, threads,
      [&](std::size_t g, unsigned) {
        const std::size_t b = offsets[g], e = offsets[g + 1];
        if (b == e) return;
        const std::uint32_t first = model.group_offsets[g];
        const std::size_t kg = model.group_offsets[g + 1] - first;
        const CentroidSearcher searcher(model.centroids.data() + std::size_t{first} * d, kg, d);
        CentroidSearcher::Scratch scratch;
        std::vector<float> rows;
        std::vector<std::uint32_t> lab;
        std::vector<float> dis;
        for (std::size_t cb = b; cb < e; cb += CentroidSearcher::kRowBlock) {
          const std::size_t ce = std::min(e, cb + CentroidSearcher::kRowBlock);
          rows.resize((ce - cb) * d);
          lab.resize(ce - cb);
          dis.resize(ce - cb);
          for (std::size_t i = cb; i < ce; ++i) {
            std::memcpy(rows.data() + (i - cb) * d, x + (entries[i] / probe) * d,
                        d * sizeof(float));
          }
          searcher.Nearest(rows.data(), d, ce - cb, lab.data(), dis.data(), &scratch);
          for (std::size_t i = cb; i < ce; ++i) {
            fine_label[entries[i]] = first + lab[i - cb];
            fine_dist[entries[i]] = dis[i - cb];
          }
        }
      },
      1);
  for (std::size_t r = 0; r < n; ++r) {
    std::size_t best = r * probe;
    for (std::size_t s = r * probe + 1; s < (r + 1) * probe; ++s) {
      if (fine_dist[s] < fine_dist[best] ||
          (fine_dist[s] == fine_dist[best] && fine_label[s] < fine_label[best])) {
        best = s;
      }
    }
    labels[r] = fine_label[best];
    if (distances) distances[r] = fine_dist[best];
  }
  return Status::OK();
}

}  // namespace strata::quant
