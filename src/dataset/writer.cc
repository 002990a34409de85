// DatasetWriter: buffered streaming into a temporary file, header patched and
// file renamed into place at Finish().
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "dataset/element_traits.h"
#include "dataset/file_util.h"
#include "dataset/half.h"
#include "dataset/npy.h"
#include "strata/dataset.h"

namespace strata {

using dataset_internal::InvalidArgumentAt;

namespace {

// Pending output is flushed in writes of about this size.
constexpr std::size_t kWriteBufferBytes = std::size_t{1} << 20;
// Rows converted per step by AppendFloat (bounds its scratch memory).
constexpr std::size_t kConvertChunkValues = std::size_t{1} << 18;

// ".fbin" etc. Built by appending: GCC 12 warns (falsely, -Wrestrict) on
// `"." + std::string(...)`.
std::string DotName(DatasetFormat f) {
  std::string s = ".";
  s += DatasetFormatName(f);
  return s;
}

bool IsBinFormat(DatasetFormat f) {
  return f == DatasetFormat::kFbin || f == DatasetFormat::kU8bin || f == DatasetFormat::kI8bin;
}

Status CheckWritable(const std::string& path, DatasetFormat format, ElementType type) {
  if (IsGroundTruthFormat(format)) {
    return InvalidArgumentAt(
        path, DotName(format) + " is a ground-truth format; write it with WriteGroundTruth");
  }
  if (format == DatasetFormat::kNpy) {
    if (dataset_internal::NpyDescr(type).empty()) {
      return InvalidArgumentAt(path, "npy output supports float32, float16, uint8 and int8, not " +
                                         std::string(ElementTypeName(type)));
    }
    return Status::OK();
  }
  const ElementType fixed = *dataset_internal::FixedElementType(format);
  if (fixed != type) {
    return InvalidArgumentAt(path, DotName(format) + " stores " +
                                       std::string(ElementTypeName(fixed)) + ", not " +
                                       std::string(ElementTypeName(type)));
  }
  return Status::OK();
}

}  // namespace

DatasetWriter::DatasetWriter(std::string path, std::string temp_path, int fd, DatasetFormat format,
                             ElementType type, std::uint32_t dim, bool sync)
    : path_(std::move(path)),
      temp_path_(std::move(temp_path)),
      fd_(fd),
      format_(format),
      type_(type),
      dim_(dim),
      sync_(sync) {}

DatasetWriter::~DatasetWriter() {
  if (!finished_) Abandon();
}

Result<std::unique_ptr<DatasetWriter>> DatasetWriter::Create(const std::string& path,
                                                             ElementType type, std::uint32_t dim,
                                                             const DatasetWriteOptions& options) {
  DatasetFormat format;
  if (options.format.has_value()) {
    format = *options.format;
  } else {
    STRATA_ASSIGN_OR_RETURN(format, DetectDatasetFormat(path));
  }
  STRATA_RETURN_IF_ERROR(CheckWritable(path, format, type));
  if (dim == 0 || dim > kMaxDatasetDimension) {
    return InvalidArgumentAt(path, "dimension " + std::to_string(dim) + " is outside 1.." +
                                       std::to_string(kMaxDatasetDimension));
  }
  std::string temp;
  STRATA_ASSIGN_OR_RETURN(int fd, dataset_internal::CreateTempFor(path, &temp));
  std::unique_ptr<DatasetWriter> w(
      new DatasetWriter(path, std::move(temp), fd, format, type, dim, options.sync));
  w->buffer_.reserve(kWriteBufferBytes);
  // Reserve the header; its real contents (the row count) are known at Finish().
  if (IsBinFormat(format)) {
    w->header_bytes_ = 8;
  } else if (format == DatasetFormat::kNpy) {
    w->header_bytes_ = dataset_internal::kNpyWriteHeaderBytes;
  }
  w->buffer_.resize(static_cast<std::size_t>(w->header_bytes_));
  return w;
}

Status DatasetWriter::Fail(Status status) {
  if (error_.ok()) error_ = status;
  Abandon();
  return error_;
}

void DatasetWriter::Abandon() {
  if (fd_ >= 0 || !temp_path_.empty()) dataset_internal::DiscardTemp(fd_, temp_path_);
  fd_ = -1;
  temp_path_.clear();
  buffer_.clear();
}

Status DatasetWriter::Flush() {
  if (buffer_.empty()) return Status::OK();
  Status s = dataset_internal::WriteFull(fd_, temp_path_, buffer_.data(), buffer_.size());
  buffer_.clear();
  return s;
}

Status DatasetWriter::WriteRows(const std::byte* data, std::uint64_t count) {
  const std::size_t rb = static_cast<std::size_t>(dim_) * ElementSize(type_);
  if (count > std::numeric_limits<std::size_t>::max() / 2 / rb) {
    return Fail(InvalidArgumentAt(path_, std::to_string(count) + " rows is an absurd append"));
  }
  if (IsBinFormat(format_) && rows_ + count > std::numeric_limits<std::uint32_t>::max()) {
    return Fail(
        InvalidArgumentAt(path_, DotName(format_) + " holds at most 2^32-1 rows (u32 row count)"));
  }
  if (format_ == DatasetFormat::kFvecs || format_ == DatasetFormat::kBvecs) {
    // Every TEXMEX row is preceded by its dimension.
    unsigned char prefix[4];
    dataset_internal::StoreU32(prefix, dim_);
    for (std::uint64_t r = 0; r < count; ++r) {
      if (buffer_.size() + 4 + rb > kWriteBufferBytes) {
        Status s = Flush();
        if (!s.ok()) return Fail(s);
      }
      const auto* p = reinterpret_cast<const std::byte*>(prefix);
      buffer_.insert(buffer_.end(), p, p + 4);
      buffer_.insert(buffer_.end(), data + r * rb, data + (r + 1) * rb);
    }
  } else {
    const std::size_t bytes = static_cast<std::size_t>(count) * rb;
    if (buffer_.size() + bytes > kWriteBufferBytes) {
      Status s = Flush();
      if (!s.ok()) return Fail(s);
    }
    if (bytes >= kWriteBufferBytes) {
      // Large appends go straight to the file without a copy.
      Status s = dataset_internal::WriteFull(fd_, temp_path_, data, bytes);
      if (!s.ok()) return Fail(s);
    } else {
      buffer_.insert(buffer_.end(), data, data + bytes);
    }
  }
  rows_ += count;
  return Status::OK();
}

Status DatasetWriter::AppendChecked(ElementType given, const void* data, std::size_t elements) {
  if (!error_.ok()) return error_;
  if (finished_) return InvalidArgumentAt(path_, "Append after Finish");
  if (given != type_) {
    return InvalidArgumentAt(path_, "writer stores " + std::string(ElementTypeName(type_)) +
                                        " but was given " + std::string(ElementTypeName(given)) +
                                        " values (use AppendFloat to convert float32)");
  }
  if (elements % dim_ != 0) {
    return InvalidArgumentAt(path_, std::to_string(elements) +
                                        " values is not a whole number of rows of dim " +
                                        std::to_string(dim_));
  }
  return WriteRows(static_cast<const std::byte*>(data), elements / dim_);
}

Status DatasetWriter::Append(std::span<const float> rows) {
  return AppendChecked(ElementType::kFloat32, rows.data(), rows.size());
}
Status DatasetWriter::Append(std::span<const std::uint16_t> rows) {
  // uint16_t carries half bit patterns; npy stores float16 only.
  return AppendChecked(ElementType::kFloat16, rows.data(), rows.size());
}
Status DatasetWriter::Append(std::span<const std::uint8_t> rows) {
  return AppendChecked(ElementType::kUint8, rows.data(), rows.size());
}
Status DatasetWriter::Append(std::span<const std::int8_t> rows) {
  return AppendChecked(ElementType::kInt8, rows.data(), rows.size());
}

Status DatasetWriter::AppendRaw(const void* data, std::uint64_t count) {
  if (!error_.ok()) return error_;
  if (finished_) return InvalidArgumentAt(path_, "Append after Finish");
  return WriteRows(static_cast<const std::byte*>(data), count);
}

Status DatasetWriter::AppendFloat(std::span<const float> rows) {
  if (type_ == ElementType::kFloat32) return Append(rows);
  if (!error_.ok()) return error_;
  if (finished_) return InvalidArgumentAt(path_, "Append after Finish");
  if (rows.size() % dim_ != 0) {
    return InvalidArgumentAt(path_, std::to_string(rows.size()) +
                                        " values is not a whole number of rows of dim " +
                                        std::to_string(dim_));
  }
  const std::size_t chunk_rows = std::max<std::size_t>(1, kConvertChunkValues / dim_);
  const std::size_t esize = ElementSize(type_);
  std::vector<std::byte> scratch(std::min(rows.size(), chunk_rows * dim_) * esize);
  for (std::size_t done = 0; done < rows.size();) {
    const std::size_t n = std::min(rows.size() - done, chunk_rows * dim_);
    const float* in = rows.data() + done;
    for (std::size_t i = 0; i < n; ++i) {
      const float v = in[i];
      if (type_ == ElementType::kFloat16) {
        const std::uint16_t h = dataset_internal::FloatToHalf(v);
        std::memcpy(scratch.data() + 2 * i, &h, 2);
        continue;
      }
      const float lo = type_ == ElementType::kUint8 ? 0.0f : -128.0f;
      const float hi = type_ == ElementType::kUint8 ? 255.0f : 127.0f;
      const float r = std::nearbyint(v);
      if (!(r >= lo && r <= hi)) {  // also catches NaN
        return InvalidArgumentAt(path_, "row " + std::to_string(rows_ + (done + i) / dim_) +
                                            " column " + std::to_string((done + i) % dim_) +
                                            " value " + std::to_string(v) + " does not fit " +
                                            std::string(ElementTypeName(type_)));
      }
      scratch[i] = static_cast<std::byte>(
          type_ == ElementType::kUint8 ? static_cast<std::uint8_t>(r)
                                       : static_cast<std::uint8_t>(static_cast<std::int8_t>(r)));
    }
    STRATA_RETURN_IF_ERROR(WriteRows(scratch.data(), n / dim_));
    done += n;
  }
  return Status::OK();
}

Status DatasetWriter::Finish() {
  if (!error_.ok()) return error_;
  if (finished_) return Status::OK();
  Status s = Flush();
  if (!s.ok()) return Fail(s);
  if (IsBinFormat(format_)) {
    unsigned char header[8];
    dataset_internal::StoreU32(header, static_cast<std::uint32_t>(rows_));
    dataset_internal::StoreU32(header + 4, dim_);
    s = dataset_internal::PwriteFull(fd_, temp_path_, 0, header, 8);
  } else if (format_ == DatasetFormat::kNpy) {
    const std::string header = dataset_internal::FormatNpyHeader(type_, rows_, dim_);
    s = dataset_internal::PwriteFull(fd_, temp_path_, 0, header.data(), header.size());
  }
  if (!s.ok()) return Fail(s);
  const int fd = fd_;
  fd_ = -1;
  s = dataset_internal::CommitTemp(fd, temp_path_, path_, sync_);
  if (!s.ok()) {
    // CommitTemp closed the descriptor and removed the temporary file (unless
    // only the directory fsync failed, after the rename).
    temp_path_.clear();
    error_ = s;
    return s;
  }
  finished_ = true;
  return Status::OK();
}

Status WriteDataset(const std::string& path, const VectorMatrix& matrix,
                    const DatasetWriteOptions& options) {
  STRATA_ASSIGN_OR_RETURN(
      auto writer, DatasetWriter::Create(path, matrix.element_type(), matrix.dim(), options));
  STRATA_RETURN_IF_ERROR(writer->AppendRaw(matrix.bytes(), matrix.rows()));
  return writer->Finish();
}

}  // namespace strata
