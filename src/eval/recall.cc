#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "strata/eval.h"

namespace strata {

Result<RecallReport> ComputeRecall(const GroundTruth& results, const GroundTruth& gt,
                                   std::size_t k) {
  if (k == 0) return Status::InvalidArgument("recall: k must be at least 1");
  if (results.num_queries != gt.num_queries) {
    return Status::InvalidArgument("recall: results have " + std::to_string(results.num_queries) +
                                   " queries but the ground truth has " + std::to_string(gt.num_queries));
  }
  if (results.k < k) {
    return Status::InvalidArgument("recall@" + std::to_string(k) + ": results hold only " +
                                   std::to_string(results.k) + " neighbours per query");
  }
  if (gt.k < k) {
    return Status::InvalidArgument("recall@" + std::to_string(k) + ": ground truth holds only " +
                                   std::to_string(gt.k) + " neighbours per query");
  }
  if (results.ids.size() != results.num_queries * results.k ||
      gt.ids.size() != gt.num_queries * gt.k) {
    return Status::InvalidArgument("recall: ids array does not match num_queries * k");
  }
  RecallReport report;
  report.num_queries = gt.num_queries;
  report.k = k;
  report.per_query.resize(gt.num_queries);
  std::unordered_set<VectorId> truth;
  for (std::size_t q = 0; q < gt.num_queries; ++q) {
    const VectorId* gids = gt.ids.data() + q * gt.k;
    truth.clear();
    for (std::size_t i = 0; i < k; ++i) truth.insert(gids[i]);
    // Ties: a neighbour at the same distance as the k-th true one is just as
    // correct, so ground-truth entries past rank k that tie with it count too.
    if (!gt.distances.empty()) {
      const float* gd = gt.distances.data() + q * gt.k;
      const float kth = gd[k - 1];
      const float tol = 1e-6f * std::max(1.0f, std::fabs(kth));
      for (std::size_t i = k; i < gt.k && std::fabs(gd[i] - kth) <= tol; ++i) {
        truth.insert(gids[i]);
      }
    }
    const VectorId* rids = results.ids.data() + q * results.k;
    std::size_t hits = 0;
    for (std::size_t i = 0; i < k; ++i) {
      if (rids[i] != kInvalidVectorId && truth.erase(rids[i]) > 0) ++hits;  // erase: no double count
    }
    report.per_query[q] = static_cast<double>(hits) / static_cast<double>(k);
  }
  double sum = 0;
  report.min_recall = report.per_query.empty() ? 0.0 : 1.0;
  for (double r : report.per_query) {
    sum += r;
    report.min_recall = std::min(report.min_recall, r);
  }
  report.mean_recall = gt.num_queries ? sum / static_cast<double>(gt.num_queries) : 0.0;
  return report;
}

}  // namespace strata
