// DatasetReader: validated header at Open, then stateless pread row ranges.
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "dataset/element_traits.h"
#include "dataset/file_util.h"
#include "dataset/finite.h"
#include "dataset/half.h"
#include "dataset/layout.h"
#include "strata/dataset.h"

namespace strata {

using dataset_internal::InputFile;

namespace {

// Rows are staged through a scratch buffer of about this size when they need
// reshaping (TEXMEX prefixes) or conversion, keeping memory bounded for any
// range size.
constexpr std::size_t kScratchBytes = std::size_t{4} << 20;

std::uint64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return std::uint64_t{1} << 40;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
}

// Widens `n` elements of `type` at `in` to float32.
void ConvertToFloat(ElementType type, const std::byte* in, float* out, std::size_t n) {
  switch (type) {
    case ElementType::kFloat32:
      std::memcpy(out, in, n * 4);
      break;
    case ElementType::kFloat16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = dataset_internal::HalfToFloat(h);
      }
      break;
    case ElementType::kBFloat16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
        std::memcpy(out + i, &bits, 4);
      }
      break;
    case ElementType::kUint8:
      for (std::size_t i = 0; i < n; ++i)
        out[i] = static_cast<float>(std::to_integer<std::uint8_t>(in[i]));
      break;
    case ElementType::kInt8:
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = static_cast<float>(static_cast<std::int8_t>(std::to_integer<std::uint8_t>(in[i])));
      }
      break;
  }
}

}  // namespace

DatasetReader::DatasetReader(int fd, DatasetInfo info, const DatasetReadOptions& options)
    : fd_(fd), info_(std::move(info)), options_(options), row_stride_(0), row_prefix_(0) {}

DatasetReader::~DatasetReader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<std::unique_ptr<DatasetReader>> DatasetReader::Open(const std::string& path,
                                                           const DatasetReadOptions& options) {
  InputFile file;
  STRATA_ASSIGN_OR_RETURN(auto layout, dataset_internal::OpenAndProbe(path, options, &file));
  if (layout.info.ground_truth) {
    return dataset_internal::InvalidArgumentAt(
        path, "is a ground-truth file (." + std::string(DatasetFormatName(layout.info.format)) +
                  "); read it with ReadGroundTruth, not as vectors");
  }
  std::unique_ptr<DatasetReader> reader(
      new DatasetReader(file.Release(), std::move(layout.info), options));
  reader->row_stride_ = layout.row_stride;
  reader->row_prefix_ = layout.row_prefix;
  return reader;
}

std::size_t DatasetReader::row_bytes() const {
  return static_cast<std::size_t>(info_.dim) * ElementSize(info_.element_type);
}

Status DatasetReader::CheckRange(std::uint64_t begin, std::uint64_t count, std::size_t out_bytes,
                                 std::size_t elem_bytes) const {
  std::uint64_t end = 0;
  if (!dataset_internal::AddOk(begin, count, &end) || end > info_.rows) {
    return Status::OutOfRange(info_.path + ": cannot read " + std::to_string(count) +
                              " rows starting at row " + std::to_string(begin) + ": the file has " +
                              std::to_string(info_.rows) + " rows");
  }
  std::uint64_t needed = 0;
  if (!dataset_internal::MulOk(count, static_cast<std::uint64_t>(info_.dim) * elem_bytes,
                               &needed) ||
      needed > out_bytes) {
    return dataset_internal::InvalidArgumentAt(
        info_.path, "output buffer of " + std::to_string(out_bytes) + " bytes is too small for " +
                        std::to_string(count) + " rows of dim " + std::to_string(info_.dim));
  }
  return Status::OK();
}

Status DatasetReader::ReadRowsUnchecked(std::uint64_t begin, std::uint64_t count,
                                        std::byte* out) const {
  const std::size_t rb = row_bytes();
  if (row_prefix_ == 0) {
    // Rows are contiguous: one pread straight into the caller's buffer.
    return dataset_internal::PreadFull(fd_, info_.path, info_.data_offset + begin * row_stride_,
                                       static_cast<std::size_t>(count) * rb, out);
  }
  // TEXMEX rows carry an i32 dim each: stage through scratch, verify, strip.
  const std::uint64_t per_chunk = std::max<std::uint64_t>(1, kScratchBytes / row_stride_);
  std::vector<std::byte> scratch(
      static_cast<std::size_t>(std::min(count, per_chunk) * row_stride_));
  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(per_chunk, count - done);
    const std::uint64_t row0 = begin + done;
    STRATA_RETURN_IF_ERROR(
        dataset_internal::PreadFull(fd_, info_.path, info_.data_offset + row0 * row_stride_,
                                    static_cast<std::size_t>(n * row_stride_), scratch.data()));
    for (std::uint64_t r = 0; r < n; ++r) {
      const std::byte* src = scratch.data() + r * row_stride_;
      const std::int32_t d = dataset_internal::LoadI32(src);
      if (d != static_cast<std::int32_t>(info_.dim)) {
        return dataset_internal::CorruptionAt(
            info_.path, "row " + std::to_string(row0 + r) + " has dimension " + std::to_string(d) +
                            " but row 0 has " + std::to_string(info_.dim) +
                            " (inconsistent row dimensions)");
      }
      std::memcpy(out + (done + r) * rb, src + row_prefix_, rb);
    }
    done += n;
  }
  return Status::OK();
}

Status DatasetReader::ReadRowsRaw(std::uint64_t begin, std::uint64_t count,
                                  std::span<std::byte> out) const {
  STRATA_RETURN_IF_ERROR(CheckRange(begin, count, out.size(), ElementSize(info_.element_type)));
  STRATA_RETURN_IF_ERROR(ReadRowsUnchecked(begin, count, out.data()));
  if (!options_.check_finite) return Status::OK();
  if (info_.element_type == ElementType::kFloat32) {
    return dataset_internal::CheckFiniteFloat(
        info_.path, reinterpret_cast<const float*>(out.data()), count, info_.dim, begin);
  }
  if (info_.element_type == ElementType::kFloat16) {
    return dataset_internal::CheckFiniteHalf(
        info_.path, reinterpret_cast<const std::uint16_t*>(out.data()), count, info_.dim, begin);
  }
  return Status::OK();
}

namespace {

template <typename T>
Status TypedRead(const DatasetReader& reader, std::uint64_t begin, std::uint64_t count,
                 std::span<T> out) {
  if (!dataset_internal::TypeMatches<T>(reader.element_type())) {
    return dataset_internal::InvalidArgumentAt(
        reader.path(), "holds " + std::string(ElementTypeName(reader.element_type())) +
                           " data; the requested read is for a different element type "
                           "(use the matching ReadRows overload or ReadRowsAsFloat)");
  }
  return reader.ReadRowsRaw(begin, count, std::as_writable_bytes(out));
}

}  // namespace

Status DatasetReader::ReadRows(std::uint64_t begin, std::uint64_t count,
                               std::span<float> out) const {
  return TypedRead(*this, begin, count, out);
}
Status DatasetReader::ReadRows(std::uint64_t begin, std::uint64_t count,
                               std::span<std::uint16_t> out) const {
  return TypedRead(*this, begin, count, out);
}
Status DatasetReader::ReadRows(std::uint64_t begin, std::uint64_t count,
                               std::span<std::uint8_t> out) const {
  return TypedRead(*this, begin, count, out);
}
Status DatasetReader::ReadRows(std::uint64_t begin, std::uint64_t count,
                               std::span<std::int8_t> out) const {
  return TypedRead(*this, begin, count, out);
}

Status DatasetReader::ReadAsFloatImpl(std::uint64_t begin, std::uint64_t count, float* out,
                                      bool check_finite) const {
  const std::size_t dim = info_.dim;
  if (info_.element_type == ElementType::kFloat32) {
    STRATA_RETURN_IF_ERROR(ReadRowsUnchecked(begin, count, reinterpret_cast<std::byte*>(out)));
  } else {
    const std::size_t rb = row_bytes();
    const std::uint64_t per_chunk = std::max<std::uint64_t>(1, kScratchBytes / rb);
    std::vector<std::byte> scratch(static_cast<std::size_t>(std::min(count, per_chunk)) * rb);
    for (std::uint64_t done = 0; done < count;) {
      const std::uint64_t n = std::min(per_chunk, count - done);
      STRATA_RETURN_IF_ERROR(ReadRowsUnchecked(begin + done, n, scratch.data()));
      ConvertToFloat(info_.element_type, scratch.data(), out + done * dim,
                     static_cast<std::size_t>(n) * dim);
      done += n;
    }
  }
  if (check_finite &&
      (info_.element_type == ElementType::kFloat32 || info_.element_type == ElementType::kFloat16 ||
       info_.element_type == ElementType::kBFloat16)) {
    return dataset_internal::CheckFiniteFloat(info_.path, out, count, info_.dim, begin);
  }
  return Status::OK();
}

Status DatasetReader::ReadRowsAsFloat(std::uint64_t begin, std::uint64_t count,
                                      std::span<float> out) const {
  STRATA_RETURN_IF_ERROR(CheckRange(begin, count, out.size_bytes(), sizeof(float)));
  return ReadAsFloatImpl(begin, count, out.data(), options_.check_finite);
}

Result<VectorMatrix> DatasetReader::ReadAllImpl(bool as_float) const {
  const ElementType type = as_float ? ElementType::kFloat32 : info_.element_type;
  const std::uint64_t bytes = info_.rows * info_.dim * ElementSize(type);
  const std::uint64_t limit =
      options_.max_read_all_bytes ? options_.max_read_all_bytes : PhysicalMemoryBytes();
  if (bytes > limit) {
    return dataset_internal::InvalidArgumentAt(
        info_.path, "reading all " + std::to_string(info_.rows) + " rows needs " +
                        std::to_string(bytes) + " bytes, above the limit of " +
                        std::to_string(limit) + "; stream the file with ReadRows instead");
  }
  STRATA_ASSIGN_OR_RETURN(VectorMatrix m, VectorMatrix::Allocate(type, info_.rows, info_.dim));
  if (info_.rows == 0) return m;
  if (as_float) {
    STRATA_RETURN_IF_ERROR(ReadRowsAsFloat(0, info_.rows, m.values<float>()));
  } else {
    STRATA_RETURN_IF_ERROR(
        ReadRowsRaw(0, info_.rows, std::span<std::byte>(m.bytes(), m.size_bytes())));
  }
  return m;
}

Result<VectorMatrix> DatasetReader::ReadAll() const { return ReadAllImpl(false); }
Result<VectorMatrix> DatasetReader::ReadAllAsFloat() const { return ReadAllImpl(true); }

Result<VectorMatrix> ReadVectorsAsFloat(const std::string& path,
                                        const DatasetReadOptions& options) {
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(path, options));
  return reader->ReadAllAsFloat();
}

}  // namespace strata
