// The coarse quantizer of an IVF index: given a query, the n_probe clusters
// whose centroids are nearest.
//
// kIrq (default; RaBitQ-SSD §3.4, "IRQ"): an in-memory IVF-RaBitQ over the C
// centroids themselves. The centroids are grouped by a second k-means into
// G = max(1, round(C / 1000)) inner groups; each centroid is coded with
// B = 9-bit RaBitQ relative to its group's mean. A query computes exact
// distances to the G group means, scans the FastScan blocks of its
// min(G, ceil(n_probe / 2)) nearest groups, refines (ex-code) only centroids
// whose lower bound beats the current n_probe-th estimate, and keeps the
// n_probe best estimates: no exact scan over all C centroids.
// kFlat: exact distances to all C centroids (for comparison and small C).
//
// Either way the n_probe clusters returned carry their exact metric distance
// and ||q - c|| and <q, c> recomputed from the float centroids (n_probe * d
// flops), so the per-cluster RaBitQ terms of the fine search are exact.
//
// Distances are "smaller is nearer": squared L2 for kL2 and kCosine (the
// query normalised; centroids are means and are not normalised), -<q, c> for
// kInnerProduct.
//
// Thread-safety: immutable after Build/Deserialize; Search is const and
// thread-safe given one CoarseScratch per thread.
#ifndef STRATA_IVF_COARSE_QUANTIZER_H_
#define STRATA_IVF_COARSE_QUANTIZER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "quant/rabitq/quantizer.h"
#include "strata/result.h"
#include "strata/types.h"

namespace strata::ivf {

enum class CoarseKind : std::uint8_t {
  kIrq = 0,   // IVF-RaBitQ over the centroids
  kFlat = 1,  // exact scan of every centroid
};

// "irq" / "flat"; InvalidArgument for anything else.
Status ParseCoarseKind(const std::string& name, CoarseKind* out);
const char* CoarseKindName(CoarseKind kind);

// One selected cluster.
struct CoarseHit {
  std::uint32_t cluster = 0;
  float distance = 0.0f;       // exact metric distance to the centroid (see above)
  float l2 = 0.0f;             // ||q - c|| (not squared)
  float inner_product = 0.0f;  // <q, c>
};

// Per-thread working memory of Search.
struct CoarseScratch {
  quant::rabitq::RabitqQuery query;
  std::vector<std::pair<float, std::uint32_t>> order;
  std::vector<std::pair<float, std::uint32_t>> heap;
};

class CoarseQuantizer {
 public:
  // Builds over `centroids` (num_clusters * dim floats; borrowed: the caller
  // keeps them alive as long as the quantizer, at the same address).
  // Deterministic by seed. InvalidArgument for empty input or a bad metric.
  static Result<CoarseQuantizer> Build(const float* centroids, std::size_t num_clusters,
                                       std::size_t dim, Metric metric, CoarseKind kind,
                                       std::uint64_t seed, unsigned threads = 0);

  // Blob (little-endian): u32 magic 0x43465649 ("IVFC"), u16 version 1,
  // u8 kind, u8 metric, u64 C, u64 d; for kIrq: u64 G, then arrays (u64
  // length + elements): quantizer blob (RabitqQuantizer::Serialize), group
  // means G*d f32, group offsets G+1 u64, members C u32 (centroid ids in
  // group order), RAM blocks, SSD records (one per member, 9-bit codes).
  // The centroids themselves are not included.
  void Serialize(std::vector<std::uint8_t>* out) const;
  // Corruption for a malformed blob or one that does not match `centroids`'
  // shape; the centroids are borrowed as in Build.
  static Result<CoarseQuantizer> Deserialize(std::span<const std::uint8_t> blob,
                                             const float* centroids, std::size_t num_clusters,
                                             std::size_t dim);

  CoarseQuantizer(CoarseQuantizer&&) noexcept = default;
  CoarseQuantizer& operator=(CoarseQuantizer&&) noexcept = default;

  CoarseKind kind() const { return kind_; }
  Metric metric() const { return metric_; }
  std::size_t num_clusters() const { return num_clusters_; }
  std::size_t num_groups() const { return group_offsets_.empty() ? 0 : group_offsets_.size() - 1; }
  // RAM held by the quantizer (codes, group means), excluding the centroids.
  std::size_t MemoryBytes() const;

  // The min(nprobe, C) nearest clusters of `query` (dim floats; normalised
  // by the caller under cosine) into `out`, ascending by exact distance.
  // Centroid estimates approximate the ranking under kIrq.
  void Search(const float* query, std::size_t nprobe, CoarseScratch* scratch,
              std::vector<CoarseHit>* out) const;
  // The hit of one given cluster (exact distance, ||q - c||, <q, c>), for
  // searches that choose their clusters by the rows they rank.
  CoarseHit HitOf(const float* query, std::uint32_t cluster) const;

 private:
  CoarseQuantizer() = default;
  float ExactDistance(const float* query, std::uint32_t cluster, float* l2, float* ip) const;

  CoarseKind kind_ = CoarseKind::kFlat;
  Metric metric_ = Metric::kL2;
  const float* centroids_ = nullptr;
  std::size_t num_clusters_ = 0;
  std::size_t dim_ = 0;
  // kIrq only.
  std::optional<quant::rabitq::RabitqQuantizer> quantizer_;
  std::vector<float> group_means_;            // G * d
  std::vector<float> rotated_means_;          // G * D'
  std::vector<std::uint64_t> group_offsets_;  // G + 1, into members_
  std::vector<std::uint32_t> members_;        // C centroid ids in group order
  std::vector<std::uint64_t> block_offsets_;  // G + 1, RAM blocks per group (prefix sums)
  std::vector<std::uint8_t> blocks_;
  std::vector<std::uint8_t> records_;
};

}  // namespace strata::ivf

#endif  // STRATA_IVF_COARSE_QUANTIZER_H_
