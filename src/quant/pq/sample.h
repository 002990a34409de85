// Training samples: which rows of a corpus a quantizer trains on.
//
// Training cost must not grow with the corpus, so k-means and PQ train on a
// uniform random sample bounded in bytes (default 128 MiB, as in DefraDB's
// DISKANN vector index) and optionally in rows per centroid (faiss's
// max_points_per_centroid).
#ifndef STRATA_QUANT_PQ_SAMPLE_H_
#define STRATA_QUANT_PQ_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::quant {

// The default bound on a training sample: 128 MiB of float32 rows.
inline constexpr std::size_t kDefaultMaxSampleBytes = std::size_t{128} << 20;

// Number of rows a training sample of an n x d float32 corpus may hold:
// min(n, max_bytes / (4 d) [if max_bytes > 0], max_rows [if max_rows > 0]).
// Never more than n; may be 0 when the byte bound is below one row.
std::size_t SampleRowCount(std::size_t n, std::size_t d, std::size_t max_bytes,
                           std::size_t max_rows);

// `m` distinct row indices drawn uniformly from [0, n), sorted ascending
// (sequential access when gathering from a memory-mapped corpus). Returns all
// of 0..n-1 when m >= n. Deterministic for a given (n, m, seed). Uses Floyd's
// algorithm: O(m log m) time and O(m) memory, independent of n.
std::vector<std::size_t> SampleRows(std::size_t n, std::size_t m, std::uint64_t seed);

// Copies rows `rows` (each `d` floats, row stride `d`) of `data` into `out`
// (resized to rows.size() * d).
void GatherRows(const float* data, std::size_t d, const std::vector<std::size_t>& rows,
                std::vector<float>* out);

}  // namespace strata::quant

#endif  // STRATA_QUANT_PQ_SAMPLE_H_
