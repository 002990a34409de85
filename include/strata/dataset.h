// Vector files that users bring: readers, writers, ground truth, a sanity
// summary, and the deterministic synthetic generator behind `strata gen`.
//
// Supported formats (byte layouts in docs/formats-input.md); all little-endian:
//   .fbin  .u8bin  .i8bin   big-ann-benchmarks: u32 rows, u32 dim, then
//                           rows * dim elements (float32 / uint8 / int8), row-major.
//   .fvecs .bvecs           TEXMEX: each row is i32 dim, then dim elements
//                           (float32 / uint8).
//   .npy                    NumPy format 1.0, 2.0 or 3.0; a 2-D C-order array of
//                           float32 ('<f4'), float16 ('<f2'), uint8 ('|u1') or int8 ('|i1').
//   .ibin                   ground truth: u32 nq, u32 k, u32 ids[nq*k], float32 dists[nq*k]
//                           (an ids-only .ibin, without the dists block, is also read).
//   .ivecs                  TEXMEX ground truth: each row is i32 k, then k i32 ids.
// The format comes from the file extension unless the caller overrides it.
//
// Files larger than RAM are read in row ranges (DatasetReader::ReadRows*), each
// a pread of exactly the rows asked for, so memory stays bounded by the block
// the caller chooses. Writers stream rows to a temporary file in the same
// directory and rename it over the final name only in Finish(), after fsync,
// so an interrupted or failed write never leaves a file that looks complete.
//
// Errors: every failure is a Status whose message starts with the file path and
// says what is wrong. Codes: NotFound (missing file), Corruption (truncated
// file, size not matching the header, zero/absurd dimension, inconsistent
// TEXMEX row dims, malformed npy header), InvalidArgument (wrong element type
// for the call, NaN/Inf in float data — with the row number —, bad options,
// non-2-D npy, id not representable in the output format), NotSupported
// (Fortran-order or big-endian npy, npy dtypes other than the four above),
// OutOfRange (rows past the end), IOError (the OS failed; errno text included).
#ifndef STRATA_DATASET_H_
#define STRATA_DATASET_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata {

// ---------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------

enum class DatasetFormat : std::uint8_t {
  kFbin = 0,   // .fbin   float32 vectors
  kU8bin = 1,  // .u8bin  uint8 vectors
  kI8bin = 2,  // .i8bin  int8 vectors
  kIbin = 3,   // .ibin   ground truth (u32 ids + float32 distances)
  kFvecs = 4,  // .fvecs  float32 vectors, per-row dim prefix
  kBvecs = 5,  // .bvecs  uint8 vectors, per-row dim prefix
  kIvecs = 6,  // .ivecs  ground truth ids (int32), per-row k prefix
  kNpy = 7,    // .npy    2-D float32/float16/uint8/int8 array
};

// Largest vector dimension (and ground-truth k) accepted when reading or
// writing. Anything larger in a header is treated as corruption.
inline constexpr std::uint32_t kMaxDatasetDimension = 65536;

// "fbin", "u8bin", "i8bin", "ibin", "fvecs", "bvecs", "ivecs", "npy".
std::string_view DatasetFormatName(DatasetFormat format);
// Parses a format name as printed by DatasetFormatName; a leading '.' is
// accepted ("fbin" or ".fbin"). InvalidArgument listing the valid names otherwise.
Result<DatasetFormat> ParseDatasetFormat(std::string_view name);
// The format implied by the extension of `path` (case-insensitive).
// InvalidArgument naming the path when the extension is not one of the eight.
Result<DatasetFormat> DetectDatasetFormat(std::string_view path);
// True for the ground-truth formats (.ibin, .ivecs).
bool IsGroundTruthFormat(DatasetFormat format);

// ---------------------------------------------------------------------------
// In-memory matrices
// ---------------------------------------------------------------------------

// A dense row-major matrix of `rows` vectors of `dim` elements of one element
// type, owned in memory (64-byte aligned). Float16/bfloat16 elements are
// uint16_t bit patterns. Move-only. Not thread-safe for concurrent mutation.
class VectorMatrix {
 public:
  VectorMatrix() = default;
  // A moved-from matrix is empty (0 rows, dim 0, no data).
  VectorMatrix(VectorMatrix&& other) noexcept { *this = std::move(other); }
  VectorMatrix& operator=(VectorMatrix&& other) noexcept {
    data_ = std::move(other.data_);
    type_ = other.type_;
    rows_ = std::exchange(other.rows_, 0);
    dim_ = std::exchange(other.dim_, 0);
    return *this;
  }

  // Allocates a zero-filled rows x dim matrix. InvalidArgument on dim == 0 or
  // a byte size that overflows. Never throws: allocation failure returns
  // InvalidArgument("cannot allocate N bytes").
  static Result<VectorMatrix> Allocate(ElementType type, std::uint64_t rows, std::uint32_t dim);

  ElementType element_type() const { return type_; }
  std::uint64_t rows() const { return rows_; }
  std::uint32_t dim() const { return dim_; }
  // Bytes of one row: dim * ElementSize(element_type()).
  std::size_t row_bytes() const;
  // Bytes of the whole matrix: rows() * row_bytes().
  std::size_t size_bytes() const { return static_cast<std::size_t>(rows_) * row_bytes(); }

  // Raw element bytes, size size_bytes().
  std::byte* bytes();
  const std::byte* bytes() const;
  // Typed view of all rows (size rows * dim). T must be the element type's C++
  // type (float, uint16_t for float16/bfloat16, uint8_t, int8_t); a mismatch
  // is a programmer error (asserted) and returns an empty span in release builds.
  template <typename T>
  std::span<T> values();
  template <typename T>
  std::span<const T> values() const;
  // Row `i` (i < rows()) as a typed span of dim elements; same type rule.
  template <typename T>
  std::span<const T> row(std::uint64_t i) const {
    const std::span<const T> all = values<T>();
    if (all.empty()) return all;
    return all.subspan(static_cast<std::size_t>(i) * dim_, dim_);
  }

 private:
  struct Free {
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data_;
  ElementType type_ = ElementType::kFloat32;
  std::uint64_t rows_ = 0;
  std::uint32_t dim_ = 0;
};

// ---------------------------------------------------------------------------
// Reading vectors
// ---------------------------------------------------------------------------

// What a file holds, from its header and size alone (no data is read).
struct DatasetInfo {
  std::string path;
  DatasetFormat format = DatasetFormat::kFbin;
  // True for .ibin/.ivecs: rows = queries, dim = k (neighbours per query).
  bool ground_truth = false;
  // Stored element type of vector files; for ground-truth files the ids are
  // u32 (.ibin) / i32 (.ivecs) and this field is kFloat32 (the distances).
  ElementType element_type = ElementType::kFloat32;
  // Ground truth only: whether the file carries distances (.ibin usually does,
  // .ivecs never does).
  bool has_distances = false;
  std::uint64_t rows = 0;
  std::uint32_t dim = 0;
  std::uint64_t file_bytes = 0;   // size of the file on disk
  std::uint64_t data_offset = 0;  // byte offset of the first row (header size)
  // .npy only: the header's format version (1, 2 or 3); 0 for other formats.
  int npy_version = 0;

  // One line such as "fbin float32 rows=1000000 dim=128 (512.0 MiB)".
  std::string ToString() const;
};

// Options for opening a vector or ground-truth file.
struct DatasetReadOptions {
  // Format to read the file as; nullopt detects it from the extension.
  std::optional<DatasetFormat> format;
  // When true, ReadRows / ReadRowsAsFloat / ReadAll* on float32 and float16
  // data fail with InvalidArgument naming the first row (and column) holding a
  // NaN or Inf. Turn off to read such data anyway (e.g. to inspect it).
  bool check_finite = true;
  // ReadAll / ReadAllAsFloat refuse (InvalidArgument, suggesting ReadRows) when
  // the result would exceed this many bytes; 0 means the machine's physical RAM.
  std::uint64_t max_read_all_bytes = 0;
};

// Header and size of `path` for any of the eight formats (vectors or ground
// truth), validated as DatasetReader::Open / ReadGroundTruth would.
Result<DatasetInfo> GetDatasetInfo(const std::string& path, const DatasetReadOptions& options = {});

// A sanity summary of a vector file over a sample of its rows (see
// DatasetReader::Summarize). Statistics are over finite values only.
struct DatasetSummary {
  std::uint64_t rows_sampled = 0;
  bool sampled_all = false;           // every row of the file was visited
  std::uint64_t values = 0;           // finite values seen
  double min = 0, max = 0, mean = 0;  // over finite values
  double mean_norm = 0;               // mean L2 norm of rows with only finite values
  double min_norm = 0, max_norm = 0;
  std::uint64_t zero_rows = 0;             // rows whose elements are all exactly 0
  std::uint64_t unit_norm_rows = 0;        // rows with |norm - 1| <= 1e-3 (normalised data)
  std::uint64_t nan_count = 0;             // NaN values
  std::uint64_t inf_count = 0;             // +-Inf values
  std::uint64_t non_finite_rows = 0;       // rows holding at least one NaN/Inf
  std::int64_t first_non_finite_row = -1;  // smallest such row index, -1 if none

  // Multi-line human-readable rendering for `strata info`.
  std::string ToString() const;
};

// Options for DatasetReader::Summarize.
struct SummaryOptions {
  // Rows to visit at most; the whole file when it has no more rows. Larger
  // files are sampled as 16 evenly spaced contiguous blocks (cheap sequential
  // reads), so the cost is bounded regardless of file size.
  std::uint64_t max_rows = 20000;
  Status Validate() const;
};

// Random-access reader of a vector file (.fbin/.u8bin/.i8bin/.fvecs/.bvecs/.npy).
// Thread-safe: all read methods are const and use pread, so any number of
// threads may read disjoint or overlapping ranges concurrently.
class DatasetReader {
 public:
  // Opens `path`, validates its header against its size and keeps the file
  // open. NotFound for a missing file; Corruption/NotSupported/InvalidArgument
  // as listed at the top of this header; InvalidArgument for ground-truth
  // formats (use ReadGroundTruth).
  static Result<std::unique_ptr<DatasetReader>> Open(const std::string& path,
                                                     const DatasetReadOptions& options = {});
  ~DatasetReader();
  DatasetReader(const DatasetReader&) = delete;
  DatasetReader& operator=(const DatasetReader&) = delete;

  const DatasetInfo& info() const { return info_; }
  std::uint64_t rows() const { return info_.rows; }
  std::uint32_t dim() const { return info_.dim; }
  ElementType element_type() const { return info_.element_type; }
  const std::string& path() const { return info_.path; }
  // Bytes of one row in the native element type (dim * element size).
  std::size_t row_bytes() const;

  // Reads rows [begin, begin + count) in the native element type into `out`,
  // which must hold at least count * dim elements. The overload must match the
  // stored type (float for float32, uint16_t for float16 bits, uint8_t, int8_t)
  // or InvalidArgument is returned. OutOfRange when begin + count > rows().
  // Float data is checked for NaN/Inf when options.check_finite.
  Status ReadRows(std::uint64_t begin, std::uint64_t count, std::span<float> out) const;
  Status ReadRows(std::uint64_t begin, std::uint64_t count, std::span<std::uint16_t> out) const;
  Status ReadRows(std::uint64_t begin, std::uint64_t count, std::span<std::uint8_t> out) const;
  Status ReadRows(std::uint64_t begin, std::uint64_t count, std::span<std::int8_t> out) const;
  // Same, as raw element bytes of any type (size >= count * row_bytes()).
  Status ReadRowsRaw(std::uint64_t begin, std::uint64_t count, std::span<std::byte> out) const;

  // Reads rows [begin, begin + count) converted to float32 (uint8/int8 values
  // become the same integers as floats, float16 is widened exactly) into `out`
  // (size >= count * dim). Works for every element type.
  Status ReadRowsAsFloat(std::uint64_t begin, std::uint64_t count, std::span<float> out) const;

  // Whole file in the native element type / as float32. For small files:
  // refuses when larger than options.max_read_all_bytes.
  Result<VectorMatrix> ReadAll() const;
  Result<VectorMatrix> ReadAllAsFloat() const;

  // Sanity statistics over a sample of rows (see SummaryOptions); NaN/Inf are
  // counted rather than rejected. Reads at most options.max_rows rows.
  Result<DatasetSummary> Summarize(const SummaryOptions& options = {}) const;

 private:
  DatasetReader(int fd, DatasetInfo info, const DatasetReadOptions& options);
  Status CheckRange(std::uint64_t begin, std::uint64_t count, std::size_t out_bytes,
                    std::size_t elem_bytes) const;
  Status ReadRowsUnchecked(std::uint64_t begin, std::uint64_t count, std::byte* out) const;
  Status ReadAsFloatImpl(std::uint64_t begin, std::uint64_t count, float* out,
                         bool check_finite) const;
  Result<VectorMatrix> ReadAllImpl(bool as_float) const;

  int fd_;
  DatasetInfo info_;
  DatasetReadOptions options_;
  std::uint64_t row_stride_;  // bytes per row in the file (incl. a TEXMEX dim prefix)
  std::uint64_t row_prefix_;  // 4 for .fvecs/.bvecs, else 0
};

// Convenience: opens `path` and reads every row as float32.
Result<VectorMatrix> ReadVectorsAsFloat(const std::string& path,
                                        const DatasetReadOptions& options = {});

// ---------------------------------------------------------------------------
// Writing vectors
// ---------------------------------------------------------------------------

struct DatasetWriteOptions {
  // Format to write; nullopt derives it from the final path's extension.
  std::optional<DatasetFormat> format;
  // fsync the file and its directory before Finish() returns. Leave on for
  // real outputs; tests and scratch files may turn it off for speed.
  bool sync = true;
};

// Streams rows to a vector file. The rows go to a temporary file
// "<path>.tmp-<pid>-<n>" in the same directory; Finish() completes the header,
// fsyncs, and renames it to `path`. If Finish() is never called, or any step
// fails, the temporary file is removed and `path` is left untouched.
// Element types per format: .fbin/.fvecs float32, .u8bin/.bvecs uint8, .i8bin
// int8, .npy float32/float16/uint8/int8; ground-truth formats are written with
// WriteGroundTruth. After an error every later call returns that same error.
// Not thread-safe: one writer per thread.
class DatasetWriter {
 public:
  // Creates the temporary file. InvalidArgument for a format/type mismatch,
  // dim == 0 or dim > kMaxDatasetDimension; IOError if the directory is not
  // writable.
  static Result<std::unique_ptr<DatasetWriter>> Create(const std::string& path, ElementType type,
                                                       std::uint32_t dim,
                                                       const DatasetWriteOptions& options = {});
  ~DatasetWriter();  // removes the temporary file unless Finish() succeeded
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  // Appends rows given in the writer's element type; `rows.size()` must be a
  // multiple of dim (InvalidArgument otherwise or on a type mismatch).
  // uint16_t means float16 bit patterns.
  Status Append(std::span<const float> rows);
  Status Append(std::span<const std::uint16_t> rows);
  Status Append(std::span<const std::uint8_t> rows);
  Status Append(std::span<const std::int8_t> rows);
  // Appends `count` rows of raw element bytes (count * dim * element size bytes).
  Status AppendRaw(const void* data, std::uint64_t count);
  // Appends float32 rows converted to the writer's type: float16 rounds to
  // nearest even; uint8/int8 round to nearest and fail with InvalidArgument
  // (naming the row) on values outside the type's range or non-finite values.
  Status AppendFloat(std::span<const float> rows);

  // Writes the final header, fsyncs (options.sync) and renames the temporary
  // file to the final path. Idempotent after success.
  Status Finish();

  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  std::uint64_t rows_written() const { return rows_; }

 private:
  DatasetWriter(std::string path, std::string temp_path, int fd, DatasetFormat format,
                ElementType type, std::uint32_t dim, bool sync);
  Status AppendChecked(ElementType given, const void* data, std::size_t elements);
  Status WriteRows(const std::byte* data, std::uint64_t count);
  Status Flush();
  Status Fail(Status status);
  void Abandon();

  std::string path_;
  std::string temp_path_;
  int fd_;
  DatasetFormat format_;
  ElementType type_;
  std::uint32_t dim_;
  bool sync_;
  std::uint64_t rows_ = 0;
  std::uint64_t header_bytes_ = 0;
  std::vector<std::byte> buffer_;  // pending bytes not yet written
  Status error_;                   // sticky first error
  bool finished_ = false;
};

// Writes every row of `matrix` to `path` (format from options or extension).
Status WriteDataset(const std::string& path, const VectorMatrix& matrix,
                    const DatasetWriteOptions& options = {});

// ---------------------------------------------------------------------------
// Ground truth
// ---------------------------------------------------------------------------

// The k nearest base ids of each of num_queries queries, nearest first.
struct GroundTruth {
  std::uint64_t num_queries = 0;
  std::uint32_t k = 0;
  std::vector<VectorId> ids;     // size num_queries * k, row-major
  std::vector<float> distances;  // size num_queries * k, or empty when unknown (.ivecs)

  // ids of query q (q < num_queries), k entries.
  std::span<const VectorId> ids_of(std::uint64_t q) const {
    return std::span<const VectorId>(ids).subspan(static_cast<std::size_t>(q) * k, k);
  }
  // Checks shapes (ids.size() == num_queries * k, distances empty or the same
  // size), and when num_base > 0 that every id is < num_base. InvalidArgument
  // naming the first bad query/position otherwise.
  Status Validate(std::uint64_t num_base = 0) const;
};

// A position with no result (a search that found fewer than k) is
// kInvalidVectorId in memory, stored as the id 2^32 - 1 (kMissingIdU32) with
// distance +inf in .ibin and as -1 in .ivecs (faiss's convention).
inline constexpr std::uint32_t kMissingIdU32 = 0xFFFFFFFFu;

// Reads .ibin (with or without the distances block) or .ivecs ground truth.
// Errors as for vector files; .ivecs ids below -1 are Corruption; NaN
// distances (and infinite ones other than a missing result's) are
// InvalidArgument unless options.check_finite is false.
Result<GroundTruth> ReadGroundTruth(const std::string& path,
                                    const DatasetReadOptions& options = {});

// Writes .ibin (ids as u32 followed by float32 distances; when `gt.distances`
// is empty only the ids block is written) or .ivecs (ids only, distances are
// dropped), atomically like DatasetWriter. InvalidArgument when an id does not
// fit the format (>= 2^32 - 1 for .ibin, >= 2^31 for .ivecs), naming the
// query; kInvalidVectorId is written as the missing-result sentinel.
Status WriteGroundTruth(const std::string& path, const GroundTruth& gt,
                        const DatasetWriteOptions& options = {});

// ---------------------------------------------------------------------------
// Synthetic data (strata gen)
// ---------------------------------------------------------------------------

// A clustered Gaussian mixture in a low-dimensional latent space, projected to
// `dim` dimensions plus isotropic noise (closer to real embeddings than iid
// Gaussian data; mirrors shared/bench-data/gen_synth.py):
//   C = clusters or max(16, n / 500) clusters; centre_c ~ N(0, 2^2 I) in the
//   latent space; sigma_c ~ U(0.4, 1.2); weights 1 / rank^0.6, shuffled;
//   projection A (latent_dim x dim) ~ N(0, 1) / sqrt(latent_dim);
//   row = (centre_c + sigma_c * N(0, I)) A + noise * N(0, I_dim), c ~ weights.
// Queries come from the same mixture through a different random stream.
// Metric kCosine normalises every row to unit length; kL2 and kInnerProduct
// leave rows unnormalised.
// Integer element types use a fixed affine map (independent of the sample, so
// streamed output is identical to in-memory output):
//   scale = 127 / (4 * rms), rms = the model's root-mean-square coordinate
//   value (1 / sqrt(dim) under cosine);
//   int8:  q = clamp(round(x * scale), -127, 127)
//   uint8: q = clamp(round(x * scale) + 128, 0, 255)
// Determinism: row i depends only on (seed, i, model), never on thread count
// or block boundaries. Results are identical across runs of the same build;
// they are not bit-identical to the numpy script.
struct SyntheticOptions {
  std::uint64_t num_base = 10000;    // base rows (n), >= 1
  std::uint32_t dim = 128;           // output dimension, 1..kMaxDatasetDimension
  std::uint64_t num_queries = 1000;  // query rows, >= 0
  std::uint64_t seed = 7;
  Metric metric = Metric::kL2;                       // kCosine normalises rows
  ElementType element_type = ElementType::kFloat32;  // float32, float16, uint8, int8
  std::uint32_t latent_dim = 32;                     // latent dimension m, 1..1024
  std::uint64_t clusters = 0;                        // 0: max(16, num_base / 500)
  float noise = 0.15f;   // std of the isotropic noise in dim space, >= 0
  unsigned threads = 0;  // worker threads; 0 = hardware concurrency
  Status Validate() const;
};

// The generated sets, row-major in options.element_type.
struct SyntheticData {
  VectorMatrix base;     // num_base x dim
  VectorMatrix queries;  // num_queries x dim
  // The integer map's `scale` (see SyntheticOptions); 0 for float outputs.
  float quantization_scale = 0;
};

// Streaming form: builds the model once and then produces any row range on
// demand, so `strata gen` can write billions of rows in bounded memory.
// Thread-safe: generation methods are const.
class SyntheticGenerator {
 public:
  // Validates options and draws the model (centres, sigmas, weights, A).
  static Result<SyntheticGenerator> Create(const SyntheticOptions& options);

  const SyntheticOptions& options() const { return options_; }
  std::uint64_t num_clusters() const { return sigmas_.size(); }
  // See SyntheticOptions; 0 for float element types.
  float quantization_scale() const;

  // Rows [begin, begin + count) of the base (or query) set as float32 before
  // any integer quantisation: `out` has count * dim floats. Uses
  // options.threads workers. OutOfRange past the end.
  Status BaseRowsFloat(std::uint64_t begin, std::uint64_t count, std::span<float> out) const;
  Status QueryRowsFloat(std::uint64_t begin, std::uint64_t count, std::span<float> out) const;
  // Same rows in options.element_type as raw bytes (count * dim * element size).
  Status BaseRows(std::uint64_t begin, std::uint64_t count, std::span<std::byte> out) const;
  Status QueryRows(std::uint64_t begin, std::uint64_t count, std::span<std::byte> out) const;

 private:
  SyntheticGenerator() = default;
  // Serial: writes rows [begin, begin + count) of `stream` as float32.
  void FillRowsFloat(std::uint64_t stream, std::uint64_t begin, std::uint64_t count,
                     float* out) const;
  // Range/buffer checks, then FillRowsFloat in parallel, converting to the
  // element type unless `as_float`.
  Status Rows(std::uint64_t stream, std::uint64_t total, std::uint64_t begin, std::uint64_t count,
              std::span<std::byte> out, bool as_float) const;

  SyntheticOptions options_;
  std::vector<float> projection_;  // latent_dim x dim, row-major
  std::vector<float> centers_;     // clusters x latent_dim
  std::vector<float> sigmas_;      // clusters
  std::vector<double> cdf_;        // clusters, cumulative weights, last == 1
  float scale_ = 0;                // integer quantisation scale
};

// Generates both sets in memory.
Status GenerateSynthetic(const SyntheticOptions& options, SyntheticData* out);

// Generates both sets straight into files (formats from the extensions, which
// must accept options.element_type), in blocks of bounded size; `query_path`
// may be empty to skip queries. Files appear atomically (see DatasetWriter).
Status WriteSynthetic(const SyntheticOptions& options, const std::string& base_path,
                      const std::string& query_path, const DatasetWriteOptions& write_options = {});

}  // namespace strata

#endif  // STRATA_DATASET_H_
