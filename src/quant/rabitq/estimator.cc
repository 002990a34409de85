// RaBitQ query side: query preparation, per-cluster terms, FastScan batch
// estimates and the B-bit refinement from an SSD record (formulas in
// quantizer.h).
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/distance.h"
#include "quant/rabitq/le_coding.h"
#include "quant/rabitq/quantizer.h"

namespace strata::quant::rabitq {
namespace {

// Nibble of `slot` for table t in the interleaved code part of a RAM batch
// block (layout.h).
inline unsigned SlotNibble(const std::uint8_t* codes, std::size_t t, std::size_t slot) {
  const std::size_t v = slot % 16;
  const std::size_t m = v < 8 ? 2 * v : 2 * (v - 8) + 1;
  const std::uint8_t byte = codes[16 * t + m];
  return slot < 16 ? (byte & 0x0Fu) : (byte >> 4);
}

}  // namespace

Status RabitqQuantizer::PrepareQuery(const float* query, RabitqQuery* out) const {
  thread_local std::vector<float> normalised;
  const float* src = query;
  if (options_.metric == Metric::kCosine) {
    normalised.assign(query, query + dim());
    if (!kernels::NormalizeInPlace(normalised.data(), dim())) {
      return Status::InvalidArgument("rabitq: zero query under the cosine metric");
    }
    src = normalised.data();
  }
  const std::size_t dp = padded_dim();
  const std::size_t dm = prefix_dim();
  out->rotated.resize(dp);
  rotator_->Rotate(src, out->rotated.data());
  double sum_prefix = 0.0;
  double sum_all = 0.0;
  for (std::size_t i = 0; i < dp; ++i) {
    sum_all += out->rotated[i];
    if (i + 1 == dm) sum_prefix = sum_all;
  }
  if (!std::isfinite(sum_all) || !std::isfinite(kernels::SquaredNorm(out->rotated.data(), dp))) {
    return Status::InvalidArgument("rabitq: query is not finite");
  }
  out->sum_prefix = static_cast<float>(sum_prefix);
  out->sum_all = static_cast<float>(sum_all);
  const std::size_t tables = layout_.num_tables();
  out->float_lut.resize(tables * 16);
  out->lut.resize(tables * 16);
  BuildFloatLut(out->rotated.data(), tables, out->float_lut.data());
  out->lut_scale = QuantizeLut(out->float_lut.data(), tables, out->lut.data());
  return Status::OK();
}

ClusterQueryFactors RabitqQuantizer::ForCluster(const RabitqQuery& query,
                                                const float* rotated_centroid) const {
  double dist_sq = 0.0;
  double ip = 0.0;
  for (std::size_t i = 0; i < padded_dim(); ++i) {
    const double q = query.rotated[i];
    const double c = rotated_centroid[i];
    dist_sq += (q - c) * (q - c);
    ip += q * c;
  }
  return ForClusterFromDistances(static_cast<float>(std::sqrt(dist_sq)), static_cast<float>(ip));
}

ClusterQueryFactors RabitqQuantizer::ForClusterFromDistances(float distance,
                                                             float inner_product) const {
  ClusterQueryFactors f;
  f.g_error = distance;
  switch (options_.metric) {
    case Metric::kL2:
      f.g_add = distance * distance;
      break;
    case Metric::kInnerProduct:
      f.g_add = -inner_product;
      break;
    case Metric::kCosine:
      f.g_add = 1.0f - inner_product;
      break;
  }
  return f;
}

void RabitqQuantizer::EstimateBatch(const RabitqQuery& query, const ClusterQueryFactors& cluster,
                                    const std::uint8_t* block, BatchEstimates* out) const {
  EstimateBatch(query, cluster, block, BestFastScanKernels(), out);
}

void RabitqQuantizer::EstimateBatch(const RabitqQuery& query, const ClusterQueryFactors& cluster,
                                    const std::uint8_t* block, const FastScanKernels& kernels,
                                    BatchEstimates* out) const {
  alignas(64) std::uint32_t acc[kBatchSize];
  kernels.accumulate(block, query.lut.data(), layout_.num_tables(), acc);
  alignas(64) float f_add[kBatchSize];
  alignas(64) float f_rescale[kBatchSize];
  alignas(64) float f_error[kBatchSize];
  const std::uint8_t* factors = block + layout_.ram_codes_bytes();
  std::memcpy(f_add, factors, sizeof(f_add));
  std::memcpy(f_rescale, factors + 128, sizeof(f_rescale));
  std::memcpy(f_error, factors + 256, sizeof(f_error));
  // The float stage is shared by every ISA (only the integer accumulators
  // come from the kernel), so ISAs agree bit for bit.
  const float delta = query.lut_scale.delta;
  const float offset = query.lut_scale.offset;
  const float k = -0.5f * query.sum_prefix;
  const float g_add = cluster.g_add;
  const float g_error = cluster.g_error;
  for (std::size_t s = 0; s < kBatchSize; ++s) {
    // acc < 255 * 16384 < 2^31: the signed conversion is exact and, unlike
    // the unsigned one, a single SSE2 instruction when vectorised.
    const float ip = delta * static_cast<float>(static_cast<std::int32_t>(acc[s])) + offset;
    const float est = f_add[s] + g_add + f_rescale[s] * (ip + k);
    out->prefix_ip[s] = ip;
    out->est[s] = est;
    out->lower[s] = est - f_error[s] * g_error;
  }
}

SlotEstimate RabitqQuantizer::EstimateSlot(const RabitqQuery& query,
                                           const ClusterQueryFactors& cluster,
                                           const std::uint8_t* block, std::size_t slot) const {
  // The slot's factors from the block's three 32-float arrays (as
  // EstimateBatch reads them).
  const std::uint8_t* factors = block + layout_.ram_codes_bytes();
  float f_add, f_rescale, f_error;
  std::memcpy(&f_add, factors + 4 * slot, sizeof(float));
  std::memcpy(&f_rescale, factors + 128 + 4 * slot, sizeof(float));
  std::memcpy(&f_error, factors + 256 + 4 * slot, sizeof(float));
  SlotEstimate e;
  e.prefix_ip = ExactPrefixIp(query, block, slot);
  e.est = f_add + cluster.g_add + f_rescale * (e.prefix_ip - 0.5f * query.sum_prefix);
  e.lower = e.est - f_error * cluster.g_error;
  return e;
}

float RabitqQuantizer::ExactPrefixIp(const RabitqQuery& query, const std::uint8_t* block,
                                     std::size_t slot) const {
  const std::size_t tables = layout_.num_tables();
  const float* lut = query.float_lut.data();
  float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (std::size_t t = 0; t < tables; t += 4) {
    for (std::size_t j = 0; j < 4; ++j) {
      acc[j] += lut[16 * (t + j) + SlotNibble(block, t + j, slot)];
    }
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

double RabitqQuantizer::SuffixIp(const RabitqQuery& query, const std::uint8_t* suffix_bits) const {
  const std::size_t first_byte = layout_.prefix_code_bytes();
  const float* q = query.rotated.data();
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t j = 0; j < layout_.suffix_code_bytes(); ++j) {
    const unsigned byte = suffix_bits[j];
    const float* qj = q + 8 * (first_byte + j);
    for (int t = 0; t < 8; ++t) acc[t] += static_cast<float>((byte >> (7 - t)) & 1u) * qj[t];
  }
  double sum = 0.0;
  for (float v : acc) sum += v;
  return sum;
}

float RabitqQuantizer::Refine(const RabitqQuery& query, const ClusterQueryFactors& cluster,
                              float prefix_ip, const std::uint8_t* ssd_record) const {
  const SsdRecordView record = ReadSsdRecord(layout_, ssd_record);
  const float* q = query.rotated.data();
  const double ip_b = static_cast<double>(prefix_ip) + SuffixIp(query, record.suffix_bits);
  const int ex = layout_.ex_bits;
  double wq;  // <w, q> for the B-bit grid vector w (quantizer.h)
  if (ex == 0) {
    wq = ip_b - 0.5 * query.sum_all;
  } else {
    const double ex_dot = ExCodeDot(record.ex_code, q, layout_.padded_dim, ex);
    const double half_range = 0.5 * static_cast<double>((1 << (ex + 1)) - 1);
    wq = static_cast<double>(1 << ex) * ip_b + ex_dot - half_range * query.sum_all;
  }
  return static_cast<float>(record.f_add_ex + cluster.g_add + record.f_rescale_ex * wq);
}

}  // namespace strata::quant::rabitq
