// Deterministic clustered synthetic vectors (strata gen); see dataset.h for
// the model. Mirrors shared/bench-data/gen_synth.py with our own generators.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "dataset/half.h"
#include "dataset/random.h"
#include "strata/dataset.h"

namespace strata {

using dataset_internal::Rng;
using dataset_internal::StreamSeed;

namespace {

// Stream ids: the model, base rows and query rows never share a stream.
constexpr std::uint64_t kModelStream = 0;
constexpr std::uint64_t kBaseStream = 1;
constexpr std::uint64_t kQueryStream = 2;
// Rows per parallel work item (each item converts through a small buffer).
constexpr std::size_t kGrainRows = 256;
// Rows per block when streaming to files: about this many bytes of float rows.
constexpr std::size_t kWriteBlockBytes = std::size_t{32} << 20;

bool IsGeneratable(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kUint8 ||
         t == ElementType::kInt8;
}

// Converts n floats to `type` at `out` using the documented affine map for
// the integer types.
void Quantize(ElementType type, float scale, const float* in, std::byte* out, std::size_t n) {
  switch (type) {
    case ElementType::kFloat32:
      std::memcpy(out, in, n * 4);
      break;
    case ElementType::kFloat16:
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = dataset_internal::FloatToHalf(in[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < n; ++i) {
        const float q = std::clamp(std::nearbyint(in[i] * scale), -127.0f, 127.0f);
        out[i] = static_cast<std::byte>(static_cast<std::int8_t>(q));
      }
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < n; ++i) {
        const float q = std::clamp(std::nearbyint(in[i] * scale) + 128.0f, 0.0f, 255.0f);
        out[i] = static_cast<std::byte>(static_cast<std::uint8_t>(q));
      }
      break;
    default:
      break;
  }
}

}  // namespace

Status SyntheticOptions::Validate() const {
  if (num_base == 0) return Status::InvalidArgument("synthetic: num_base must be >= 1");
  if (dim == 0 || dim > kMaxDatasetDimension) {
    return Status::InvalidArgument("synthetic: dim " + std::to_string(dim) + " is outside 1.." +
                                   std::to_string(kMaxDatasetDimension));
  }
  if (latent_dim == 0 || latent_dim > 1024) {
    return Status::InvalidArgument("synthetic: latent_dim " + std::to_string(latent_dim) +
                                   " is outside 1..1024");
  }
  if (clusters > (std::uint64_t{1} << 26)) {
    return Status::InvalidArgument("synthetic: clusters " + std::to_string(clusters) +
                                   " is above 2^26");
  }
  if (!(noise >= 0.0f) || !std::isfinite(noise)) {
    return Status::InvalidArgument("synthetic: noise must be finite and >= 0");
  }
  if (!IsGeneratable(element_type)) {
    return Status::InvalidArgument("synthetic: element type " +
                                   std::string(ElementTypeName(element_type)) +
                                   " is not generated (use float32, float16, uint8 or int8)");
  }
  return Status::OK();
}

Result<SyntheticGenerator> SyntheticGenerator::Create(const SyntheticOptions& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  SyntheticGenerator g;
  g.options_ = options;
  const std::size_t m = options.latent_dim;
  const std::size_t d = options.dim;
  const std::size_t c =
      options.clusters
          ? static_cast<std::size_t>(options.clusters)
          : static_cast<std::size_t>(std::max<std::uint64_t>(16, options.num_base / 500));
  // The model is small (m x d + c x m values) and drawn serially from one stream.
  Rng rng(StreamSeed(options.seed, kModelStream, 0));
  g.projection_.resize(m * d);
  const double inv_sqrt_m = 1.0 / std::sqrt(static_cast<double>(m));
  for (float& a : g.projection_) a = static_cast<float>(rng.Normal() * inv_sqrt_m);
  g.centers_.resize(c * m);
  for (float& x : g.centers_) x = static_cast<float>(2.0 * rng.Normal());
  g.sigmas_.resize(c);
  for (float& s : g.sigmas_) s = static_cast<float>(0.4 + 0.8 * rng.Uniform());
  // Zipf-like skew: weight 1 / rank^0.6, ranks shuffled over the clusters.
  std::vector<double> w(c);
  for (std::size_t i = 0; i < c; ++i) w[i] = 1.0 / std::pow(static_cast<double>(i + 1), 0.6);
  for (std::size_t i = c - 1; i > 0; --i) std::swap(w[i], w[rng.Below(i + 1)]);
  double total = 0;
  for (double x : w) total += x;
  g.cdf_.resize(c);
  double acc = 0;
  for (std::size_t i = 0; i < c; ++i) {
    acc += w[i] / total;
    g.cdf_[i] = acc;
  }
  g.cdf_.back() = 1.0;

  if (options.element_type == ElementType::kUint8 || options.element_type == ElementType::kInt8) {
    double rms;
    if (options.metric == Metric::kCosine) {
      rms = 1.0 / std::sqrt(static_cast<double>(d));
    } else {
      // Mean over coordinates of E[x_j^2] = trace(A^T S A) / d + noise^2 with
      // S = sum_c w_c (mu_c mu_c^T + sigma_c^2 I); computed as
      // sum_c w_c (mu_c^T G mu_c + sigma_c^2 trace G) with G = A A^T (m x m).
      std::vector<double> gram(m * m, 0.0);
      for (std::size_t a = 0; a < m; ++a) {
        for (std::size_t b = a; b < m; ++b) {
          double s = 0;
          for (std::size_t j = 0; j < d; ++j) {
            s += static_cast<double>(g.projection_[a * d + j]) * g.projection_[b * d + j];
          }
          gram[a * m + b] = gram[b * m + a] = s;
        }
      }
      double trace = 0;
      for (std::size_t a = 0; a < m; ++a) trace += gram[a * m + a];
      double second_moment = 0;
      std::vector<double> gmu(m);
      for (std::size_t k = 0; k < c; ++k) {
        const float* mu = &g.centers_[k * m];
        double quad = 0;
        for (std::size_t a = 0; a < m; ++a) {
          double s = 0;
          for (std::size_t b = 0; b < m; ++b) s += gram[a * m + b] * mu[b];
          quad += mu[a] * s;
        }
        const double wk = w[k] / total;
        second_moment += wk * (quad + static_cast<double>(g.sigmas_[k]) * g.sigmas_[k] * trace);
      }
      rms = std::sqrt(second_moment / static_cast<double>(d) +
                      static_cast<double>(options.noise) * options.noise);
    }
    g.scale_ = rms > 0 ? static_cast<float>(127.0 / (4.0 * rms)) : 1.0f;
  }
  return g;
}

float SyntheticGenerator::quantization_scale() const { return scale_; }

void SyntheticGenerator::FillRowsFloat(std::uint64_t stream, std::uint64_t begin,
                                       std::uint64_t count, float* out) const {
  const std::size_t m = options_.latent_dim;
  const std::size_t d = options_.dim;
  const float noise = options_.noise;
  const bool normalize = options_.metric == Metric::kCosine;
  std::vector<float> z(m);
  for (std::uint64_t r = 0; r < count; ++r) {
    const std::uint64_t row = begin + r;
    // Each row is a pure function of (seed, stream, row): see random.h.
    Rng rng(StreamSeed(options_.seed, stream, row));
    const double u = rng.Uniform();
    const std::size_t c = std::min<std::size_t>(
        static_cast<std::size_t>(std::upper_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin()),
        cdf_.size() - 1);
    const float sigma = sigmas_[c];
    const float* mu = &centers_[c * m];
    for (std::size_t l = 0; l < m; ++l) z[l] = mu[l] + sigma * static_cast<float>(rng.Normal());
    float* o = out + r * d;
    for (std::size_t j = 0; j < d; ++j) o[j] = noise * static_cast<float>(rng.Normal());
    // o += z A, one latent axis at a time (contiguous rows of A vectorise).
    for (std::size_t l = 0; l < m; ++l) {
      const float zl = z[l];
      const float* a = &projection_[l * d];
      for (std::size_t j = 0; j < d; ++j) o[j] += zl * a[j];
    }
    if (normalize) {
      double sq = 0;
      for (std::size_t j = 0; j < d; ++j) sq += static_cast<double>(o[j]) * o[j];
      if (sq > 0) {
        const float inv = static_cast<float>(1.0 / std::sqrt(sq));
        for (std::size_t j = 0; j < d; ++j) o[j] *= inv;
      }
    }
  }
}

Status SyntheticGenerator::Rows(std::uint64_t stream, std::uint64_t total, std::uint64_t begin,
                                std::uint64_t count, std::span<std::byte> out,
                                bool as_float) const {
  if (begin > total || count > total - begin) {
    return Status::OutOfRange("synthetic: cannot produce " + std::to_string(count) +
                              " rows starting at row " + std::to_string(begin) + " of " +
                              std::to_string(total));
  }
  const std::size_t d = options_.dim;
  const ElementType type = as_float ? ElementType::kFloat32 : options_.element_type;
  const std::size_t esize = ElementSize(type);
  if (out.size() / (d * esize) < count) {
    return Status::InvalidArgument("synthetic: output buffer of " + std::to_string(out.size()) +
                                   " bytes is too small for " + std::to_string(count) +
                                   " rows of dim " + std::to_string(d));
  }
  ParallelForChunks(
      count, options_.threads, kGrainRows, [&](std::size_t b, std::size_t e, unsigned) {
        if (type == ElementType::kFloat32) {
          FillRowsFloat(stream, begin + b, e - b, reinterpret_cast<float*>(out.data()) + b * d);
          return;
        }
        std::vector<float> tmp((e - b) * d);
        FillRowsFloat(stream, begin + b, e - b, tmp.data());
        Quantize(type, scale_, tmp.data(), out.data() + b * d * esize, tmp.size());
      });
  return Status::OK();
}

Status SyntheticGenerator::BaseRowsFloat(std::uint64_t begin, std::uint64_t count,
                                         std::span<float> out) const {
  return Rows(kBaseStream, options_.num_base, begin, count, std::as_writable_bytes(out), true);
}

Status SyntheticGenerator::QueryRowsFloat(std::uint64_t begin, std::uint64_t count,
                                          std::span<float> out) const {
  return Rows(kQueryStream, options_.num_queries, begin, count, std::as_writable_bytes(out), true);
}

Status SyntheticGenerator::BaseRows(std::uint64_t begin, std::uint64_t count,
                                    std::span<std::byte> out) const {
  return Rows(kBaseStream, options_.num_base, begin, count, out, false);
}

Status SyntheticGenerator::QueryRows(std::uint64_t begin, std::uint64_t count,
                                     std::span<std::byte> out) const {
  return Rows(kQueryStream, options_.num_queries, begin, count, out, false);
}

Status GenerateSynthetic(const SyntheticOptions& options, SyntheticData* out) {
  STRATA_ASSIGN_OR_RETURN(SyntheticGenerator gen, SyntheticGenerator::Create(options));
  STRATA_ASSIGN_OR_RETURN(VectorMatrix base, VectorMatrix::Allocate(options.element_type,
                                                                    options.num_base, options.dim));
  STRATA_ASSIGN_OR_RETURN(
      VectorMatrix queries,
      VectorMatrix::Allocate(options.element_type, options.num_queries, options.dim));
  STRATA_RETURN_IF_ERROR(
      gen.BaseRows(0, options.num_base, std::span<std::byte>(base.bytes(), base.size_bytes())));
  STRATA_RETURN_IF_ERROR(gen.QueryRows(
      0, options.num_queries, std::span<std::byte>(queries.bytes(), queries.size_bytes())));
  out->base = std::move(base);
  out->queries = std::move(queries);
  out->quantization_scale = gen.quantization_scale();
  return Status::OK();
}

namespace {

// Streams `total` rows of one set into `path` in bounded blocks.
Status WriteSet(const SyntheticGenerator& gen, bool queries, std::uint64_t total,
                const std::string& path, const DatasetWriteOptions& write_options) {
  const SyntheticOptions& o = gen.options();
  STRATA_ASSIGN_OR_RETURN(auto writer,
                          DatasetWriter::Create(path, o.element_type, o.dim, write_options));
  const std::size_t row_bytes = static_cast<std::size_t>(o.dim) * ElementSize(o.element_type);
  const std::uint64_t block = std::max<std::size_t>(1, kWriteBlockBytes / (o.dim * 4));
  std::vector<std::byte> buf(static_cast<std::size_t>(std::min(block, total)) * row_bytes);
  for (std::uint64_t done = 0; done < total;) {
    const std::uint64_t n = std::min(block, total - done);
    const std::span<std::byte> out(buf.data(), static_cast<std::size_t>(n) * row_bytes);
    STRATA_RETURN_IF_ERROR(queries ? gen.QueryRows(done, n, out) : gen.BaseRows(done, n, out));
    STRATA_RETURN_IF_ERROR(writer->AppendRaw(buf.data(), n));
    done += n;
  }
  return writer->Finish();
}

}  // namespace

Status WriteSynthetic(const SyntheticOptions& options, const std::string& base_path,
                      const std::string& query_path, const DatasetWriteOptions& write_options) {
  STRATA_ASSIGN_OR_RETURN(SyntheticGenerator gen, SyntheticGenerator::Create(options));
  STRATA_RETURN_IF_ERROR(WriteSet(gen, false, options.num_base, base_path, write_options));
  if (!query_path.empty()) {
    STRATA_RETURN_IF_ERROR(WriteSet(gen, true, options.num_queries, query_path, write_options));
  }
  return Status::OK();
}

}  // namespace strata
