#include "eval/exact_knn.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "base/parallel.h"
#include "kernels/distance.h"

namespace strata {
namespace {

// Heap order: larger distance first, then larger id, so the heap top is the
// worst kept candidate and ties are broken towards smaller ids.
bool Worse(const ExactKnn::Candidate& a, const ExactKnn::Candidate& b) {
  return a.dist < b.dist || (a.dist == b.dist && a.id < b.id);
}

// Converts n * dim values of a float-like element type to float32.
void ToFloat(ElementType type, const void* in, std::size_t count, float* out) {
  switch (type) {
    case ElementType::kFloat32:
      std::memcpy(out, in, count * sizeof(float));
      break;
    case ElementType::kFloat16:
      kernels::HalfToFloatN(static_cast<const std::uint16_t*>(in), out, count);
      break;
    case ElementType::kBFloat16:
      kernels::BFloat16ToFloatN(static_cast<const std::uint16_t*>(in), out, count);
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<const std::uint8_t*>(in)[i];
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<const std::int8_t*>(in)[i];
      break;
  }
}

bool IsInteger(ElementType type) {
  return type == ElementType::kUint8 || type == ElementType::kInt8;
}

}  // namespace

ExactKnn::ExactKnn(const ExactKnnOptions& options, ElementType type, const void* queries,
                   std::size_t nq, std::size_t dim)
    : options_(options),
      type_(type),
      nq_(nq),
      dim_(dim),
      kernels_(&kernels::BestKernels()),
      queries_(nq * dim),
      query_norms_(nq, 0.0f),
      heaps_(nq) {
  ToFloat(type, queries, nq * dim, queries_.data());
  if (IsInteger(type)) {
    const std::size_t bytes = nq * dim;
    raw_queries_.assign(static_cast<const std::uint8_t*>(queries),
                        static_cast<const std::uint8_t*>(queries) + bytes);
  }
  for (std::size_t q = 0; q < nq; ++q) {
    float* row = queries_.data() + q * dim;
    if (options_.metric == Metric::kCosine && !IsInteger(type)) kernels::NormalizeInPlace(row, dim);
    query_norms_[q] = kernels::SquaredNorm(row, dim);
    heaps_[q].reserve(options_.k + 1);
  }
}

float ExactKnn::FloatDistance(const float* q, const float* x) const {
  switch (options_.metric) {
    case Metric::kL2: return kernels_->l2_f32(q, x, dim_);
    case Metric::kInnerProduct: return -kernels_->ip_f32(q, x, dim_);
    case Metric::kCosine: return 1.0f - kernels_->ip_f32(q, x, dim_);
  }
  return 0.0f;
}

float ExactKnn::IntegerDistance(std::size_t q, const void* row) const {
  const std::size_t off = q * dim_;
  if (type_ == ElementType::kUint8) {
    const auto* a = raw_queries_.data() + off;
    const auto* b = static_cast<const std::uint8_t*>(row);
    switch (options_.metric) {
      case Metric::kL2: return kernels_->l2_u8(a, b, dim_);
      case Metric::kInnerProduct: return -kernels_->ip_u8(a, b, dim_);
      case Metric::kCosine: {
        const double ab = kernels_->ip_u8(a, b, dim_);
        const double aa = kernels_->ip_u8(a, a, dim_);
        const double bb = kernels_->ip_u8(b, b, dim_);
        return (aa == 0 || bb == 0) ? 1.0f : static_cast<float>(1.0 - ab / std::sqrt(aa * bb));
      }
    }
  } else {
    const auto* a = reinterpret_cast<const std::int8_t*>(raw_queries_.data()) + off;
    const auto* b = static_cast<const std::int8_t*>(row);
    switch (options_.metric) {
      case Metric::kL2: return kernels_->l2_i8(a, b, dim_);
      case Metric::kInnerProduct: return -kernels_->ip_i8(a, b, dim_);
      case Metric::kCosine: {
        const double ab = kernels_->ip_i8(a, b, dim_);
        const double aa = kernels_->ip_i8(a, a, dim_);
        const double bb = kernels_->ip_i8(b, b, dim_);
        return (aa == 0 || bb == 0) ? 1.0f : static_cast<float>(1.0 - ab / std::sqrt(aa * bb));
      }
    }
  }
  return 0.0f;
}

void ExactKnn::Offer(std::size_t q, float dist, VectorId id) {
  auto& heap = heaps_[q];
  const Candidate c{dist, id};
  if (heap.size() < options_.k) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end(), Worse);
  } else if (Worse(c, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), Worse);
    heap.back() = c;
    std::push_heap(heap.begin(), heap.end(), Worse);
  }
}

float ExactKnn::Threshold(std::size_t q) const {
  const auto& heap = heaps_[q];
  return heap.size() < options_.k ? std::numeric_limits<float>::infinity() : heap.front().dist;
}

Status ExactKnn::AddBase(const void* rows, std::size_t n, VectorId first_id) {
  if (n == 0 || nq_ == 0) return Status::OK();
  if (IsInteger(type_)) {
    AddIntegerBlock(rows, n, first_id);
    return Status::OK();
  }
  // Convert (and for cosine normalise) the block once; scored in sub-blocks so
  // the score matrix stays within options_.score_block_bytes.
  block_.resize(n * dim_);
  ToFloat(type_, rows, n * dim_, block_.data());
  block_norms_.resize(n);
  ParallelFor(
      n, options_.threads,
      [&](std::size_t i, unsigned) {
        float* row = block_.data() + i * dim_;
        if (options_.metric == Metric::kCosine) kernels::NormalizeInPlace(row, dim_);
        block_norms_[i] = kernels::SquaredNorm(row, dim_);
      },
      1024);
  AddFloatBlock(block_.data(), n, first_id);
  return Status::OK();
}

void ExactKnn::AddFloatBlock(const float* rows, std::size_t n, VectorId first_id) {
  const std::size_t qb = std::min(nq_, options_.query_block);
  const std::size_t bb = std::max<std::size_t>(
      256, std::min(n, options_.score_block_bytes / (sizeof(float) * std::max<std::size_t>(qb, 1))));
  scores_.resize(qb * bb);
  const bool l2 = options_.metric == Metric::kL2;
  for (std::size_t q0 = 0; q0 < nq_; q0 += qb) {
    const std::size_t qn = std::min(qb, nq_ - q0);
    for (std::size_t b0 = 0; b0 < n; b0 += bb) {
      const std::size_t bn = std::min(bb, n - b0);
      // scores[qn x bn] = Q[q0:q0+qn] * X[b0:b0+bn]^T
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(qn),
                  static_cast<int>(bn), static_cast<int>(dim_), 1.0f, queries_.data() + q0 * dim_,
                  static_cast<int>(dim_), rows + b0 * dim_, static_cast<int>(dim_), 0.0f,
                  scores_.data(), static_cast<int>(bn));
      ParallelFor(
          qn, options_.threads,
          [&](std::size_t qi, unsigned) {
            const std::size_t q = q0 + qi;
            const float* srow = scores_.data() + qi * bn;
            const float* qv = queries_.data() + q * dim_;
            const float qnorm = query_norms_[q];
            float threshold = Threshold(q);
            for (std::size_t j = 0; j < bn; ++j) {
              const float xnorm = block_norms_[b0 + j];
              const float approx = l2 ? qnorm + xnorm - 2.0f * srow[j]
                                      : (options_.metric == Metric::kCosine ? 1.0f - srow[j]
                                                                            : -srow[j]);
              // sgemm's rounding error is bounded by a few ulps of the norms
              // involved; candidates within that margin of the threshold are
              // decided on the exact kernel distance.
              const float margin = 1e-4f * (qnorm + xnorm) + 1e-6f;
              if (approx - margin > threshold) continue;
              if (options_.accept && !options_.accept(q, first_id + b0 + j)) continue;
              const float exact = FloatDistance(qv, rows + (b0 + j) * dim_);
              Offer(q, exact, first_id + b0 + j);
              threshold = Threshold(q);
            }
          },
          16);
    }
  }
}

void ExactKnn::AddIntegerBlock(const void* rows, std::size_t n, VectorId first_id) {
  const auto* bytes = static_cast<const std::uint8_t*>(rows);
  ParallelFor(
      nq_, options_.threads,
      [&](std::size_t q, unsigned) {
        for (std::size_t j = 0; j < n; ++j) {
          if (options_.accept && !options_.accept(q, first_id + j)) continue;
          const float d = IntegerDistance(q, bytes + j * dim_);
          if (d <= Threshold(q)) Offer(q, d, first_id + j);
        }
      },
      4);
}

GroundTruth ExactKnn::Finish() {
  GroundTruth gt;
  gt.num_queries = nq_;
  gt.k = static_cast<std::uint32_t>(options_.k);
  gt.ids.assign(nq_ * options_.k, kInvalidVectorId);
  gt.distances.assign(nq_ * options_.k, std::numeric_limits<float>::infinity());
  for (std::size_t q = 0; q < nq_; ++q) {
    auto& heap = heaps_[q];
    std::sort_heap(heap.begin(), heap.end(), Worse);  // ascending (dist, id)
    for (std::size_t i = 0; i < heap.size(); ++i) {
      gt.ids[q * options_.k + i] = heap[i].id;
      gt.distances[q * options_.k + i] = heap[i].dist;
    }
    heap.clear();
  }
  return gt;
}

}  // namespace strata
