// DatasetReader::Summarize: cheap sanity statistics for `strata info`.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "strata/dataset.h"

namespace strata {

namespace {

// Sampled files are visited as this many evenly spaced contiguous blocks:
// sequential reads are cheap on any device, and spreading them over the file
// catches problems confined to one region (e.g. a zero-filled tail).
constexpr std::uint64_t kSampleBlocks = 16;
// Bytes of float rows converted per read while summarising (bounds memory).
constexpr std::uint64_t kReadBytes = std::uint64_t{4} << 20;

}  // namespace

Status SummaryOptions::Validate() const {
  if (max_rows == 0) return Status::InvalidArgument("SummaryOptions: max_rows must be > 0");
  return Status::OK();
}

Result<DatasetSummary> DatasetReader::Summarize(const SummaryOptions& options) const {
  STRATA_RETURN_IF_ERROR(options.Validate());
  DatasetSummary sum;
  const std::uint64_t rows = info_.rows;
  const std::uint32_t dim = info_.dim;
  // (begin, count) blocks to visit, in increasing row order.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks;
  if (rows <= options.max_rows) {
    if (rows > 0) blocks.emplace_back(0, rows);
    sum.sampled_all = true;
  } else {
    const std::uint64_t nb = std::min(kSampleBlocks, options.max_rows);
    const std::uint64_t len = options.max_rows / nb;
    // Spacing > len because rows > max_rows >= nb * len, so blocks never overlap;
    // the first starts at row 0 and the last ends at the final row.
    for (std::uint64_t b = 0; b < nb; ++b) {
      const std::uint64_t start = nb == 1 ? 0 : b * (rows - len) / (nb - 1);
      blocks.emplace_back(start, len);
    }
  }

  double value_sum = 0, norm_sum = 0;
  double vmin = std::numeric_limits<double>::infinity();
  double vmax = -std::numeric_limits<double>::infinity();
  double nmin = vmin, nmax = vmax;
  std::uint64_t finite_rows = 0;
  const std::uint64_t read_rows = std::max<std::uint64_t>(1, kReadBytes / (4 * std::uint64_t{dim}));
  std::vector<float> buf;  // grown to the largest read below (at most read_rows rows)
  for (const auto& [begin, count] : blocks) {
    for (std::uint64_t done = 0; done < count;) {
      const std::uint64_t n = std::min<std::uint64_t>(read_rows, count - done);
      if (buf.size() < n * dim) buf.resize(static_cast<std::size_t>(n) * dim);
      STRATA_RETURN_IF_ERROR(ReadAsFloatImpl(begin + done, n, buf.data(), /*check_finite=*/false));
      for (std::uint64_t r = 0; r < n; ++r) {
        const float* row = buf.data() + r * dim;
        double sq = 0;
        bool all_zero = true, finite = true;
        for (std::uint32_t j = 0; j < dim; ++j) {
          const float v = row[j];
          if (std::isnan(v)) {
            ++sum.nan_count;
            finite = false;
          } else if (std::isinf(v)) {
            ++sum.inf_count;
            finite = false;
          } else {
            const double d = v;
            value_sum += d;
            vmin = std::min(vmin, d);
            vmax = std::max(vmax, d);
            sq += d * d;
            ++sum.values;
          }
          all_zero &= (v == 0.0f);
        }
        if (all_zero) ++sum.zero_rows;
        if (finite) {
          const double norm = std::sqrt(sq);
          norm_sum += norm;
          nmin = std::min(nmin, norm);
          nmax = std::max(nmax, norm);
          ++finite_rows;
          if (std::fabs(norm - 1.0) <= 1e-3) ++sum.unit_norm_rows;
        } else {
          ++sum.non_finite_rows;
          if (sum.first_non_finite_row < 0) {
            sum.first_non_finite_row = static_cast<std::int64_t>(begin + done + r);
          }
        }
      }
      sum.rows_sampled += n;
      done += n;
    }
  }
  if (sum.values > 0) {
    sum.min = vmin;
    sum.max = vmax;
    sum.mean = value_sum / static_cast<double>(sum.values);
  }
  if (finite_rows > 0) {
    sum.mean_norm = norm_sum / static_cast<double>(finite_rows);
    sum.min_norm = nmin;
    sum.max_norm = nmax;
  }
  return sum;
}

std::string DatasetSummary::ToString() const {
  char buf[512];
  std::string out;
  std::snprintf(buf, sizeof(buf), "sampled rows: %llu%s\n",
                static_cast<unsigned long long>(rows_sampled), sampled_all ? " (all)" : "");
  out += buf;
  std::snprintf(buf, sizeof(buf), "values: min %.6g  max %.6g  mean %.6g\n", min, max, mean);
  out += buf;
  std::snprintf(buf, sizeof(buf), "row norm: mean %.6g  min %.6g  max %.6g%s\n", mean_norm,
                min_norm, max_norm,
                rows_sampled > 0 && unit_norm_rows == rows_sampled ? "  (all unit length)" : "");
  out += buf;
  std::snprintf(buf, sizeof(buf), "zero rows: %llu  NaN values: %llu  Inf values: %llu",
                static_cast<unsigned long long>(zero_rows),
                static_cast<unsigned long long>(nan_count),
                static_cast<unsigned long long>(inf_count));
  out += buf;
  if (non_finite_rows > 0) {
    std::snprintf(buf, sizeof(buf), "  (%llu rows, first at row %lld)",
                  static_cast<unsigned long long>(non_finite_rows),
                  static_cast<long long>(first_non_finite_row));
    out += buf;
  }
  out += "\n";
  return out;
}

}  // namespace strata
