// RaBitQ quantizer: options, creation, serialisation and encoding. The query
// side (PrepareQuery, estimates, refinement) is in estimator.cc.
#include "quant/rabitq/quantizer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>

#include "base/checksum.h"
#include "base/parallel.h"
#include "kernels/distance.h"
#include "quant/pq/blas_threads.h"
#include "quant/rabitq/le_coding.h"

namespace strata::quant::rabitq {
namespace {

constexpr std::uint32_t kQuantizerMagic = 0x5A514252u;  // "RBQZ"
constexpr std::uint16_t kQuantizerVersion = 1;
constexpr std::size_t kQuantizerHeaderBytes = 64;

// Scratch reused by EncodeRotated on each thread (a_i = |r_i| / ||r|| and the
// ex-code values), so that bulk encoding does not allocate per vector.
struct ExScratch {
  std::vector<float> a;
  std::vector<std::uint8_t> k;
};
ExScratch& ThreadExScratch() {
  thread_local ExScratch scratch;
  return scratch;
}

bool IsFinite(float x) { return std::isfinite(x); }

}  // namespace

Status RabitqOptions::Validate() const {
  if (dim == 0 || dim > kMaxRotatorDim) {
    return Status::InvalidArgument("rabitq: dim " + std::to_string(dim) + " not in [1, " +
                                   std::to_string(kMaxRotatorDim) + "]");
  }
  if (metric != Metric::kL2 && metric != Metric::kInnerProduct && metric != Metric::kCosine) {
    return Status::InvalidArgument("rabitq: unknown metric");
  }
  if (total_bits < 1 || total_bits > kMaxTotalBits) {
    return Status::InvalidArgument("rabitq: total_bits " + std::to_string(total_bits) +
                                   " not in [1, 9]");
  }
  const std::size_t dp = PaddedDim(dim);
  if (prefix_dim != 0 && (prefix_dim % 64 != 0 || prefix_dim > dp)) {
    return Status::InvalidArgument("rabitq: prefix_dim " + std::to_string(prefix_dim) +
                                   " must be a multiple of 64 in [64, " + std::to_string(dp) +
                                   "] (or 0 for the whole code)");
  }
  if (rotator != RotatorKind::kDense && rotator != RotatorKind::kFhtKac) {
    return Status::InvalidArgument("rabitq: unknown rotator kind");
  }
  if (!(epsilon0 > 0.0f) || !IsFinite(epsilon0)) {
    return Status::InvalidArgument("rabitq: epsilon0 must be a positive finite number");
  }
  if (!(split_epsilon > 0.0f) || !IsFinite(split_epsilon)) {
    return Status::InvalidArgument("rabitq: split_epsilon must be a positive finite number");
  }
  if (ex_search != ExCodeSearch::kExact && ex_search != ExCodeSearch::kFast) {
    return Status::InvalidArgument("rabitq: unknown ex_search");
  }
  return Status::OK();
}

RabitqQuantizer::RabitqQuantizer(const RabitqOptions& options, std::unique_ptr<Rotator> rotator,
                                 double fast_ex_fraction)
    : options_(options), rotator_(std::move(rotator)), fast_ex_fraction_(fast_ex_fraction) {
  layout_.padded_dim = rotator_->padded_dim();
  if (options_.prefix_dim == 0) options_.prefix_dim = layout_.padded_dim;
  layout_.prefix_dim = options_.prefix_dim;
  layout_.ex_bits = static_cast<int>(options_.total_bits) - 1;
}

Result<RabitqQuantizer> RabitqQuantizer::Create(const RabitqOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Rotator> rotator,
                          Rotator::Create(options.rotator, options.dim, options.seed));
  double fast_scale = 0.0;
  if (options.total_bits > 1 && options.ex_search == ExCodeSearch::kFast) {
    // A seed stream distinct from the rotation's.
    fast_scale = ExCodeFastFraction(rotator->padded_dim(), static_cast<int>(options.total_bits) - 1,
                                    options.seed ^ 0x9E3779B97F4A7C15ull);
  }
  return RabitqQuantizer(options, std::move(rotator), fast_scale);
}

void RabitqQuantizer::Serialize(std::vector<std::uint8_t>* out) const {
  std::vector<std::uint8_t> rot;
  rotator_->Serialize(&rot);
  const std::size_t start = out->size();
  out->resize(start + kQuantizerHeaderBytes + rot.size() + 8);
  std::uint8_t* p = out->data() + start;
  std::memset(p, 0, kQuantizerHeaderBytes);
  StoreLE<std::uint32_t>(p + 0, kQuantizerMagic);
  StoreLE<std::uint16_t>(p + 4, kQuantizerVersion);
  p[6] = static_cast<std::uint8_t>(options_.metric);
  p[7] = static_cast<std::uint8_t>(options_.total_bits);
  StoreLE<std::uint64_t>(p + 8, options_.dim);
  StoreLE<std::uint64_t>(p + 16, options_.prefix_dim);
  StoreLE<std::uint64_t>(p + 24, options_.seed);
  StoreLE<float>(p + 32, options_.epsilon0);
  StoreLE<float>(p + 36, options_.split_epsilon);
  p[40] = static_cast<std::uint8_t>(options_.rotator);
  p[41] = static_cast<std::uint8_t>(options_.ex_search);
  StoreLE<double>(p + 48, fast_ex_fraction_);
  StoreLE<std::uint64_t>(p + 56, rot.size());
  std::memcpy(p + kQuantizerHeaderBytes, rot.data(), rot.size());
  const std::size_t body_end = kQuantizerHeaderBytes + rot.size();
  StoreLE<std::uint64_t>(p + body_end, Checksum64(p, body_end));
}

Result<RabitqQuantizer> RabitqQuantizer::Deserialize(std::span<const std::uint8_t> blob) {
  if (blob.size() < kQuantizerHeaderBytes + 8) {
    return Status::Corruption("rabitq quantizer blob too short");
  }
  const std::uint8_t* p = blob.data();
  if (LoadLE<std::uint32_t>(p) != kQuantizerMagic) {
    return Status::Corruption("rabitq quantizer blob: bad magic");
  }
  const auto version = LoadLE<std::uint16_t>(p + 4);
  if (version != kQuantizerVersion) {
    return Status::NotSupported("rabitq quantizer blob version " + std::to_string(version));
  }
  const std::uint64_t rot_size = LoadLE<std::uint64_t>(p + 56);
  if (rot_size > blob.size() - kQuantizerHeaderBytes - 8 ||
      blob.size() != kQuantizerHeaderBytes + rot_size + 8) {
    return Status::Corruption("rabitq quantizer blob: size mismatch");
  }
  const std::size_t body_end = kQuantizerHeaderBytes + rot_size;
  if (LoadLE<std::uint64_t>(p + body_end) != Checksum64(p, body_end)) {
    return Status::Corruption("rabitq quantizer blob: checksum mismatch");
  }
  for (std::size_t i = 42; i < 48; ++i) {
    if (p[i] != 0) return Status::Corruption("rabitq quantizer blob: reserved bytes set");
  }
  RabitqOptions options;
  options.metric = static_cast<Metric>(p[6]);
  options.total_bits = p[7];
  options.dim = LoadLE<std::uint64_t>(p + 8);
  options.prefix_dim = LoadLE<std::uint64_t>(p + 16);
  options.seed = LoadLE<std::uint64_t>(p + 24);
  options.epsilon0 = LoadLE<float>(p + 32);
  options.split_epsilon = LoadLE<float>(p + 36);
  options.rotator = static_cast<RotatorKind>(p[40]);
  options.ex_search = static_cast<ExCodeSearch>(p[41]);
  const double fast_scale = LoadLE<double>(p + 48);
  if (Status s = options.Validate(); !s.ok() || options.prefix_dim == 0) {
    return Status::Corruption("rabitq quantizer blob: invalid options (" + s.ToString() + ")");
  }
  if (!std::isfinite(fast_scale) || fast_scale < 0.0) {
    return Status::Corruption("rabitq quantizer blob: bad ex-code fraction");
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Rotator> rotator,
                          Rotator::Deserialize(blob.subspan(kQuantizerHeaderBytes, rot_size)));
  if (rotator->dim() != options.dim || rotator->kind() != options.rotator) {
    return Status::Corruption("rabitq quantizer blob: rotator does not match the options");
  }
  return RabitqQuantizer(options, std::move(rotator), fast_scale);
}

void RabitqQuantizer::RotateCentroid(const float* centroid, float* out) const {
  rotator_->Rotate(centroid, out);
}

Status RabitqQuantizer::Encode(const float* vector, const float* rotated_centroid,
                               RabitqCode* code, std::uint8_t* listed_code) const {
  thread_local std::vector<float> input;
  thread_local std::vector<float> rotated;
  const float* src = vector;
  if (options_.metric == Metric::kCosine) {
    input.assign(vector, vector + dim());
    if (!kernels::NormalizeInPlace(input.data(), dim())) {
      return Status::InvalidArgument("rabitq: zero vector under the cosine metric");
    }
    src = input.data();
  }
  rotated.resize(padded_dim());
  rotator_->Rotate(src, rotated.data());
  return EncodeRotated(rotated.data(), rotated_centroid, code, listed_code);
}

Status RabitqQuantizer::EncodeRotated(const float* o, const float* c, RabitqCode* code,
                                      std::uint8_t* listed_code) const {
  const std::size_t dp = layout_.padded_dim;
  const std::size_t dm = layout_.prefix_dim;
  const int ex = layout_.ex_bits;
  code->bits.assign(layout_.code_bytes(), 0);
  code->ex_code.assign(layout_.ex_code_bytes(), 0);

  // Sums over the residual in double: the factors are ratios of sums over
  // up to 65536 terms and feed every estimate of this vector.
  double norm_sq = 0.0;  // ||r||^2
  double l1 = 0.0;       // sum |r_i| = 2 <u, r>
  double rc = 0.0;       // <r, c>
  double uc_prefix = 0.0;
  double uc_all = 0.0;  // <u, c> over the prefix / all coordinates
  for (std::size_t i = 0; i < dp; ++i) {
    const double r = static_cast<double>(o[i]) - c[i];
    const double ci = c[i];
    norm_sq += r * r;
    l1 += std::fabs(r);
    rc += r * ci;
    const double u = r > 0.0 ? 0.5 : -0.5;
    uc_all += u * ci;
    if (i < dm) uc_prefix += u * ci;
    if (r > 0.0) code->bits[i / 8] |= static_cast<std::uint8_t>(0x80u >> (i % 8));
  }
  if (!std::isfinite(norm_sq) || !std::isfinite(rc)) {
    return Status::InvalidArgument("rabitq: vector or centroid is not finite");
  }
  if (norm_sq == 0.0) {
    // o == c: est = g_add exactly.
    code->f_add = code->f_rescale = code->f_error = 0.0f;
    code->f_add_ex = code->f_rescale_ex = 0.0f;
    if (listed_code != nullptr) std::memset(listed_code, 0, layout_.listed_code_bytes());
    return Status::OK();
  }
  if (listed_code != nullptr) EncodeListedCode(o, c, code->bits, listed_code);
  const bool l2 = options_.metric == Metric::kL2;
  const double mult = l2 ? 2.0 : 1.0;
  const double norm = std::sqrt(norm_sq);
  const double ur = 0.5 * l1;  // <u, r> > 0 since r != 0
  const double scale = static_cast<double>(dp) / static_cast<double>(dm);
  const double base = l2 ? norm_sq : -rc;  // the exact part of f_add

  code->f_add = static_cast<float>(base + mult * scale * norm_sq * uc_prefix / ur);
  code->f_rescale = static_cast<float>(-mult * scale * norm_sq / ur);
  if (dm == dp) {
    // RaBitQ: |est - true| <= eps0 * sqrt((1 - <o_bar,o>^2) / <o_bar,o>^2) / sqrt(D'-1)
    // in the unit-vector inner product, <o_bar,o>^2 = <u,r>^2 / (||u||^2 ||r||^2).
    const double ratio = norm_sq * (0.25 * static_cast<double>(dp)) / (ur * ur);
    const double spread = std::sqrt(std::max(0.0, (ratio - 1.0) / static_cast<double>(dp - 1)));
    code->f_error = static_cast<float>(mult * options_.epsilon0 * norm * spread);
  } else {
    code->f_error = static_cast<float>(mult * options_.split_epsilon * norm /
                                       std::sqrt(static_cast<double>(dm)));
  }

  if (ex == 0) {
    code->f_add_ex = static_cast<float>(base + mult * norm_sq * uc_all / ur);
    code->f_rescale_ex = static_cast<float>(-mult * norm_sq / ur);
    return Status::OK();
  }

  ExScratch& scratch = ThreadExScratch();
  scratch.a.resize(dp);
  scratch.k.resize(dp);
  const double inv_norm = 1.0 / norm;
  for (std::size_t i = 0; i < dp; ++i) {
    scratch.a[i] = static_cast<float>(std::fabs(static_cast<double>(o[i]) - c[i]) * inv_norm);
  }
  const double t = options_.ex_search == ExCodeSearch::kExact
                       ? ExCodeBestScale(scratch.a.data(), dp, ex)
                       : fast_ex_fraction_ * ExCodeScaleEnd(scratch.a.data(), dp, ex);
  ExCodeQuantize(scratch.a.data(), dp, ex, t, scratch.k.data());
  const int kmax = (1 << ex) - 1;
  double wr = 0.0;  // <w, r>
  double wc = 0.0;  // <w, c>
  for (std::size_t i = 0; i < dp; ++i) {
    const double r = static_cast<double>(o[i]) - c[i];
    const double mag = scratch.k[i] + 0.5;
    const bool positive = r > 0.0;
    wr += mag * std::fabs(r);
    wc += (positive ? mag : -mag) * c[i];
    // Stored value: k for positive coordinates, kmax - k otherwise, so that
    // (bit << ex) + stored - (2^B - 1)/2 = sign * (k + 1/2).
    if (!positive) scratch.k[i] = static_cast<std::uint8_t>(kmax - scratch.k[i]);
  }
  PackExCode(scratch.k.data(), dp, ex, code->ex_code.data());
  code->f_add_ex = static_cast<float>(base + mult * norm_sq * wc / wr);
  code->f_rescale_ex = static_cast<float>(-mult * norm_sq / wr);
  return Status::OK();
}

Status RabitqQuantizer::EncodeCluster(const float* vectors, std::size_t n, const float* centroid,
                                      std::uint8_t* ram_blocks, std::uint8_t* ssd_records,
                                      unsigned threads, std::uint8_t* listed_codes) const {
  const std::size_t d = dim();
  const std::size_t dp = padded_dim();
  std::vector<float> rotated_centroid(dp);
  RotateCentroid(centroid, rotated_centroid.data());
  const std::size_t batches = (n + kBatchSize - 1) / kBatchSize;
  std::atomic<std::size_t> first_bad{n};
  // Workers call sgemm on their own tiles (dense rotator); one level of
  // threads owning the cores beats OpenBLAS threads inside every worker.
  // (Only then: the setting is process-wide.)
  std::optional<ScopedSingleThreadedBlas> single_threaded_blas;
  if (rotator_->kind() == RotatorKind::kDense) single_threaded_blas.emplace();
  // 8 batches (256 rows) per work item keep the dense rotation's sgemm large
  // enough to be efficient.
  ParallelForChunks(batches, threads, 8, [&](std::size_t begin, std::size_t end, unsigned) {
    std::vector<float> input(kBatchSize * d);
    std::vector<float> rotated(kBatchSize * dp);
    std::vector<RabitqCode> codes(kBatchSize);
    const RabitqCode* pointers[kBatchSize];
    for (std::size_t b = begin; b < end; ++b) {
      const std::size_t row0 = b * kBatchSize;
      const std::size_t rows = std::min(kBatchSize, n - row0);
      std::memcpy(input.data(), vectors + row0 * d, rows * d * sizeof(float));
      bool ok = true;
      if (options_.metric == Metric::kCosine) {
        for (std::size_t j = 0; j < rows && ok; ++j) {
          if (!kernels::NormalizeInPlace(input.data() + j * d, d)) {
            ok = false;
            std::size_t expected = first_bad.load();
            while (row0 + j < expected && !first_bad.compare_exchange_weak(expected, row0 + j)) {
            }
          }
        }
      }
      if (!ok) continue;
      rotator_->RotateBatch(input.data(), rows, rotated.data());
      for (std::size_t j = 0; j < kBatchSize; ++j) {
        pointers[j] = nullptr;
        if (j >= rows) continue;
        std::uint8_t* listed =
            listed_codes == nullptr
                ? nullptr
                : listed_codes + (row0 + j) * layout_.listed_code_bytes();
        if (!EncodeRotated(rotated.data() + j * dp, rotated_centroid.data(), &codes[j], listed)
                 .ok()) {
          std::size_t expected = first_bad.load();
          while (row0 + j < expected && !first_bad.compare_exchange_weak(expected, row0 + j)) {
          }
          continue;
        }
        pointers[j] = &codes[j];
        if (ssd_records != nullptr) {
          WriteSsdRecord(layout_, codes[j], ssd_records + (row0 + j) * layout_.ssd_record_bytes());
        }
      }
      if (ram_blocks != nullptr) {
        PackRamBatch(layout_, std::span<const RabitqCode* const>(pointers, kBatchSize),
                     ram_blocks + b * layout_.ram_batch_bytes());
      }
    }
  });
  const std::size_t bad = first_bad.load();
  if (bad < n) {
    // Re-run the failing row serially for its precise message.
    RabitqCode code;
    Status s = Encode(vectors + bad * d, rotated_centroid.data(), &code);
    if (s.ok()) s = Status::InvalidArgument("rabitq: vector is not finite");
    return s.WithContext("row " + std::to_string(bad));
  }
  return Status::OK();
}

}  // namespace strata::quant::rabitq
